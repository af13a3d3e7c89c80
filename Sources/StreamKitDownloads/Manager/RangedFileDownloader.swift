import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes file writes fail on purpose, to test what a full disk does (a tmpfs cannot be mounted
/// without root). While ``errorCode`` is set every write of downloaded bytes fails with it.
public final class WriteFaultInjector: Sendable {
    private let code = Mutex<Int32?>(nil)
    /// Creates an injector that lets writes through.
    public init() {}
    /// The `errno` writes fail with (such as `ENOSPC`), or `nil` to let them through.
    public var errorCode: Int32? {
        get { code.withLock { $0 } }
        set { code.withLock { $0 = newValue } }
    }
}

/// How a progressive file is fetched.
public struct RangedFileOptions: Sendable {
    /// Range connections at once (default 4).
    public var connections: Int
    /// The shortest half a connection takes from another.
    public var minimumSteal: Int64
    /// Errors in a row, with no byte written in between, after which the task fails.
    public var maximumConsecutiveFailures: Int
    /// The wait after the first error; it doubles with each further error in a row.
    public var initialBackoff: Duration
    /// The longest wait between attempts.
    public var maximumBackoff: Duration
    /// How often the range set is flushed and saved while bytes arrive (default 250 ms: a killed
    /// runner fetches again what arrived since the last save, so this bounds the waste).
    public var saveInterval: Duration
    /// Fails writes on purpose (tests).
    public var writeFaults: WriteFaultInjector?

    /// Creates options.
    public init(
        connections: Int = 4, minimumSteal: Int64 = 256 << 10, maximumConsecutiveFailures: Int = 5,
        initialBackoff: Duration = .milliseconds(500), maximumBackoff: Duration = .seconds(8),
        saveInterval: Duration = .milliseconds(250), writeFaults: WriteFaultInjector? = nil
    ) {
        self.connections = max(1, connections)
        self.minimumSteal = minimumSteal
        self.maximumConsecutiveFailures = max(1, maximumConsecutiveFailures)
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.saveInterval = saveInterval
        self.writeFaults = writeFaults
    }
}

/// Fetches one progressive file over several range connections into a partial file, resuming from
/// a ``FileResumeState``: pieces split and stolen by ``PieceBoard``, every range request sent with
/// `If-Range` (RFC 9110 §13.1.5), and one connection when the server ignores `Range`.
final class RangedFileDownloader: Sendable {
    struct Shared {
        var board: PieceBoard?
        var state: FileResumeState
        var rangesSupported = false
        var failures = FailureStreak()
    }

    /// Another connection saw the representation change: everything starts over.
    struct RepresentationChanged: Error {}

    let client: HTTPClient
    let url: String
    let headers: HTTPHeaders
    let partialPath: String
    let options: RangedFileOptions
    let policy: DownloadFailurePolicy
    let shared: Mutex<Shared>
    let onProgress: @Sendable (_ done: Int64, _ length: Int64?) -> Void
    let save: @Sendable (FileResumeState) async throws -> Void
    let taskID: String

    init(
        client: HTTPClient, url: String, headers: HTTPHeaders, partialPath: String, options: RangedFileOptions,
        initial: FileResumeState, taskID: String, onProgress: @escaping @Sendable (Int64, Int64?) -> Void,
        save: @escaping @Sendable (FileResumeState) async throws -> Void
    ) {
        self.client = client
        self.url = url
        self.headers = headers
        self.partialPath = partialPath
        self.options = options
        self.policy = DownloadFailurePolicy(options)
        self.shared = Mutex(Shared(state: initial))
        self.taskID = taskID
        self.onProgress = onProgress
        self.save = save
    }

    /// Fetches every missing byte; returns the final state (complete).
    func run() async throws -> FileResumeState {
        let descriptor = PrivateFiles.open(partialPath, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw DownloadManagerError(
                .fileSystem, "cannot open \(partialPath): \(String(cString: strerror(errno)))", taskID: taskID)
        }
        defer { close(descriptor) }
        var restarts = 0
        while true {
            do {
                try await runOnce(descriptor)
                let state = try await flushAndSave(descriptor)
                return state
            } catch let error as HTTPClientError {
                // A whole-file answer (a server that ignores Range) cut short: the next pass
                // asks again, from the first missing byte, after the policy's wait.
                _ = try? await flushAndSave(descriptor)
                try await failed(error, worker: nil)
            } catch is RepresentationChanged {
                restarts += 1
                guard restarts <= 2 else {
                    throw DownloadManagerError(
                        .transfer, "\(url) kept changing while it was downloaded", taskID: taskID)
                }
                shared.withLock { $0 = Shared(state: FileResumeState()) }
                _ = ftruncate(descriptor, 0)
                _ = try? await flushAndSave(descriptor)
            } catch {
                let nothingFetched = shared.withLock { $0.state.done.isEmpty && ($0.board?.done.isEmpty ?? true) }
                if nothingFetched && lseek(descriptor, 0, SEEK_END) == 0 {
                    // Nothing arrived (a 404, an origin that never answered): no empty file is
                    // left behind, and no range set to resume.
                    unlink(partialPath)
                    throw error
                }
                _ = try? await flushAndSave(descriptor)
                throw error
            }
        }
    }

    // MARK: One pass

    private func runOnce(_ descriptor: Int32) async throws {
        let initial = shared.withLock { $0.state }
        if let length = initial.length, initial.done.contains(ByteRange(0, length)) { return }
        // The first connection asks for a first window from the first missing byte: the answer
        // gives the length and whether ranges work before the file is split. Like every request,
        // it asks for no more than its connection will write (see PieceBoard).
        var first = ByteRange(0, Self.firstWindow)
        if let length = initial.length, let gap = initial.done.gaps(in: ByteRange(0, length)).first {
            first = ByteRange(gap.lowerBound, min(gap.upperBound, gap.lowerBound + Self.firstWindow))
        }
        let (response, pieceStart, pieceEnd) = try await probe(first, initial: initial, descriptor: descriptor)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await self.consume(
                        response.body, worker: 0, from: pieceStart, to: pieceEnd, descriptor: descriptor)
                } catch let error as HTTPClientError where self.shared.withLock({ $0.rangesSupported }) {
                    // Cut short like any range response: its piece goes back on the board.
                    self.shared.withLock { _ = $0.board?.release(0) }
                    try await self.failed(error, worker: 0)
                }
                try await self.workLoop(worker: 0, descriptor: descriptor)
            }
            let parallel = shared.withLock { $0.rangesSupported }
            if parallel {
                for worker in 1..<options.connections {
                    group.addTask { try await self.workLoop(worker: worker, descriptor: descriptor) }
                }
            }
            group.addTask { try await self.saveLoop(descriptor) }
            // The save loop never ends by itself: wait for the workers, then stop it.
            var workersLeft = parallel ? options.connections : 1
            while workersLeft > 0 {
                try await group.next()
                workersLeft -= 1
            }
            group.cancelAll()
            try? await group.next()
        }
        let complete = shared.withLock { shared in
            guard let board = shared.board else { return false }
            shared.state.done = board.done
            if shared.state.length == nil { shared.state.length = board.done.byteCount }
            return shared.state.length.map { board.done.contains(ByteRange(0, $0)) } ?? false
        }
        guard complete else {
            throw DownloadManagerError(.transfer, "\(url) ended before every byte arrived", taskID: taskID)
        }
    }

    /// The first request's size; later ones grow from there (``Window``).
    static let firstWindow: Int64 = 1 << 20

    /// Sends the first request and sets up the board from its answer; returns the response and
    /// the bytes it carries (to the end of the file for a whole-file answer).
    private func probe(
        _ first: ByteRange, initial: FileResumeState, descriptor: Int32
    ) async throws -> (HTTPClientResponse, Int64, Int64) {
        let start = first.lowerBound
        while true {
            var request = HTTPClientRequest(url: url, headers: headers)
            request.range = .closed(first: start, last: first.upperBound - 1)
            request.ifRange = start > 0 ? initial.validator : nil
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request)
            } catch let error as HTTPClientError {
                try await failed(error, worker: nil)
                continue
            }
            switch response.head.rangeOutcome {
            case .partial(let contentRange):
                guard let length = contentRange.completeLength else {
                    response.body.cancel()
                    throw DownloadManagerError(
                        .transfer, "\(url) answered a range without its complete length", taskID: taskID)
                }
                let end = min(contentRange.range?.upperBound ?? first.upperBound, length)
                shared.withLock { shared in
                    if let known = shared.state.length, known != length { shared.state.done = ByteRangeSet() }
                    shared.state.length = length
                    if shared.state.validator == nil || start == 0 {
                        shared.state.validator = response.head.ifRangeValidator
                    }
                    shared.rangesSupported = true
                    var board = PieceBoard(length: length, done: shared.state.done, minimumSteal: options.minimumSteal)
                    _ = board.assign(0, from: start, requestedTo: end)
                    shared.board = board
                }
                return (response, start, end)
            case .ignored(let changed):
                // The whole representation from byte 0: a new one (If-Range failed), or a server
                // that ignores Range (then one connection does it all).
                let length = response.head.completeLength
                if !initial.done.isEmpty { _ = ftruncate(descriptor, 0) }
                shared.withLock { shared in
                    shared.state = FileResumeState(length: length, validator: response.head.ifRangeValidator)
                    shared.rangesSupported = changed == true && length != nil
                    var board = PieceBoard(
                        length: length ?? Int64.max / 4, done: ByteRangeSet(), minimumSteal: options.minimumSteal)
                    _ = board.assign(0, from: 0)
                    shared.board = board
                }
                return (response, 0, length ?? Int64.max / 4)
            case .notSatisfiable:
                response.body.cancel()
                // The file shrank below what was kept: start over.
                shared.withLock { $0.state = FileResumeState() }
                _ = ftruncate(descriptor, 0)
                throw RepresentationChanged()
            case .notRequested, .notApplicable:
                response.body.cancel()
                try await failed(
                    HTTPClientError.unexpectedStatus(response.status, url: response.url, retryAfter: nil), worker: nil)
            }
        }
    }

    /// How much a connection asks for at once: 1 MiB at first, doubled after a request that took
    /// under half a second, halved (not below 256 KiB) after one over two seconds, so that a
    /// request holds about a second of the connection's bytes. What a connection has asked for
    /// cannot be taken by another; a short window keeps the end of a download shared.
    struct Window {
        private(set) var bytes: Int64 = RangedFileDownloader.firstWindow

        /// The next request's size for a file of `length` bytes: the window, but never more than
        /// one connection's share of the file (nor less than `minimum`), so that a connection that
        /// starts late (a busy machine) still finds bytes nobody has asked for.
        func bytes(forLength length: Int64, connections: Int, _ minimum: Int64) -> Int64 {
            min(bytes, max(minimum, length / Int64(max(1, connections))))
        }

        mutating func requestTook(_ duration: Duration, fullWindow: Bool) {
            if duration < .milliseconds(500) {
                if fullWindow { bytes = min(bytes * 2, 64 << 20) }
            } else if duration > .seconds(2) {
                bytes = max(bytes / 2, 256 << 10)
            }
        }
    }

    /// Asks for windows of pieces until there are none.
    private func workLoop(worker: Int, descriptor: Int32) async throws {
        var window = Window()
        while true {
            try Task.checkCancellation()
            let next: (ByteRange, HTTPClientRequest.IfRange?, Int64)? = shared.withLock { shared in
                guard let board = shared.board else { return nil }
                let size = window.bytes(forLength: board.length, connections: options.connections, options.minimumSteal)
                guard let piece = shared.board?.request(worker, window: size) else { return nil }
                return (piece, shared.state.validator, size)
            }
            guard let (piece, validator, size) = next else { return }
            var request = HTTPClientRequest(url: url, headers: headers)
            request.range = .closed(first: piece.lowerBound, last: piece.upperBound - 1)
            request.ifRange = validator
            let started = ContinuousClock.now
            do {
                let response = try await client.execute(request)
                switch response.head.rangeOutcome {
                case .partial:
                    try await consume(
                        response.body, worker: worker, from: piece.lowerBound, to: piece.upperBound,
                        descriptor: descriptor)
                    window.requestTook(started.duration(to: .now), fullWindow: piece.count == size)
                case .ignored(let changed):
                    response.body.cancel()
                    if changed == true { throw RepresentationChanged() }
                    throw DownloadManagerError(
                        .transfer, "\(url) answered bytes \(piece) with the whole file (HTTP \(response.status))",
                        taskID: taskID)
                default:
                    response.body.cancel()
                    throw HTTPClientError.unexpectedStatus(response.status, url: response.url, retryAfter: nil)
                }
            } catch let error as HTTPClientError {
                shared.withLock { _ = $0.board?.release(worker) }
                try await failed(error, worker: worker)
            }
        }
    }

    /// Writes a body carrying bytes `start..<end` while the board lets `worker` go on.
    private func consume(
        _ body: HTTPClientResponse.Body, worker: Int, from start: Int64, to end: Int64, descriptor: Int32
    ) async throws {
        var offset = start
        do {
            for try await chunk in body {
                let range = ByteRange(offset, offset + Int64(chunk.count))
                guard let part = shared.withLock({ $0.board?.claim(worker, range) }) else {
                    body.cancel()
                    return
                }
                try write(chunk, count: Int(part.count), at: part.lowerBound, descriptor: descriptor)
                let (done, length, finished) = shared.withLock { shared in
                    shared.board?.markDone(part)
                    shared.failures.progressed()
                    return (
                        shared.board?.done.byteCount ?? 0, shared.state.length, shared.board?.isFinished(worker) ?? true
                    )
                }
                onProgress(done, length)
                offset = part.upperBound
                if part.count < Int64(chunk.count) || finished {
                    body.cancel()
                    return
                }
            }
        } catch let error as DownloadManagerError {
            body.cancel()
            shared.withLock { _ = $0.board?.release(worker) }
            throw error
        }
        // The body ended: a whole-file answer of unknown length ends here; otherwise it must have
        // reached the end of the piece.
        let ok = shared.withLock { shared -> Bool in
            if shared.state.length == nil, let board = shared.board {
                shared.state.length = board.done.byteCount
                var finalBoard = PieceBoard(length: board.done.byteCount, done: board.done)
                finalBoard.release(worker)
                shared.board = finalBoard
                return true
            }
            return offset >= end || (shared.board?.isFinished(worker) ?? true)
        }
        if !ok {
            shared.withLock { _ = $0.board?.release(worker) }
            throw HTTPClientError(.truncatedBody, url: url, detail: "the body ended at byte \(offset)")
        }
    }

    private func write(_ chunk: [UInt8], count: Int, at offset: Int64, descriptor: Int32) throws {
        if let code = options.writeFaults?.errorCode { throw writeError(code, offset) }
        let failure = chunk.withUnsafeBytes { buffer -> PositionalWrite.Failure? in
            do throws(PositionalWrite.Failure) {
                try PositionalWrite.write(
                    UnsafeRawBufferPointer(rebasing: buffer[..<count]), to: descriptor, at: offset)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw writeError(failure.error.code, failure.byteOffset) }
    }

    private func writeError(_ code: Int32, _ offset: Int64) -> DownloadManagerError {
        let kind = DownloadFailure.writeFailureKind(errno: code)
        return DownloadManagerError(
            kind,
            "writing \(partialPath) at byte \(offset): \(String(cString: strerror(code)))"
                + (kind == .diskFull ? FileSystemSpace.describing(partialPath) : ""), taskID: taskID)
    }

    /// Counts an error across the connections and does what ``DownloadFailurePolicy`` decides:
    /// wait, or fail the task.
    private func failed(_ error: HTTPClientError, worker: Int?) async throws {
        let failure = DownloadFailure(error, taskCancelled: Task.isCancelled)
        let decision = shared.withLock { policy.decide(failure, streak: &$0.failures) }
        try await decision.carryOut(taskID: taskID) { _ in "\(error)" }
    }

    private func saveLoop(_ descriptor: Int32) async throws {
        while true {
            try await Task.sleep(for: options.saveInterval)
            _ = try? await flushAndSave(descriptor)
        }
    }

    /// Flushes the file, then saves the range set: a saved byte is always on disk.
    @discardableResult
    private func flushAndSave(_ descriptor: Int32) async throws -> FileResumeState {
        let state = shared.withLock { shared in
            if let board = shared.board { shared.state.done = board.done }
            return shared.state
        }
        // fdatasync can block for seconds on a busy disk: not on a thread of the cooperative pool.
        _ = await offCooperativePool { fdatasync(descriptor) }
        try await save(state)
        return state
    }
}
