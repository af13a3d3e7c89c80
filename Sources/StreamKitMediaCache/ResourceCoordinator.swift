import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open data file, closed when the last reference goes (a reader may still be reading from it
/// when the coordinator lets go).
final class DataFileHandle: Sendable {
    let descriptor: Int32
    init(descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }
}

/// What a reader does next.
enum ReadResult: Sendable {
    /// These bytes, just received.
    case bytes([UInt8])
    /// Read `range` from the file.
    case disk(ByteRange, DataFileHandle)
    /// The range is complete.
    case end
}

/// The edge of one resource: performs its ``ResourceFetchStateMachine``'s actions (starts and
/// cancels the origin requests, writes what arrives into the data file, resumes waiting readers)
/// while readers or fetches need it.
actor ResourceCoordinator {
    let key: String
    private let store: CacheStore
    private let client: HTTPClient
    private let configuration: MediaCacheConfiguration
    private var url: String
    private var metadata: MediaCacheMetadata
    private let path: String
    private var machine: ResourceFetchStateMachine
    private var file: DataFileHandle?
    private var waiters: [ReaderID: CheckedContinuation<ReadResult, any Error>] = [:]
    /// Readers failed while not waiting: their next read throws this.
    private var failures: [ReaderID: any Error] = [:]
    private var fetchTasks: [FetchID: Task<Void, Never>] = [:]
    private var fetchErrors: [FetchID: MediaCacheError] = [:]
    /// Fetches whose bodies the client's I/O thread writes into the data file itself: where the
    /// body starts in the file, how much of it was handled, and how many reserved bytes are left.
    private var directWrites: [FetchID: DirectWrite] = [:]
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    private var nextReaderNumber = 1
    /// Set once the resource was removed or the cache stopped: no new fetches.
    private var retired = false

    init(
        key: String, url: String, metadata: MediaCacheMetadata, path: String, available: ByteRangeSet,
        store: CacheStore, client: HTTPClient, configuration: MediaCacheConfiguration
    ) {
        self.key = key
        self.url = url
        self.metadata = metadata
        self.path = path
        self.store = store
        self.client = client
        self.configuration = configuration
        self.machine = ResourceFetchStateMachine(
            length: metadata.length, available: available, configuration: configuration.stateMachineConfiguration)
    }

    // MARK: Readers

    /// Registers a reader of `range`; first takes over `adopted`, the first response for the
    /// resource (its head already read), whose body delivers `served` (the whole representation
    /// from byte 0 when `readsWhole`). Both in one turn of the actor, so that the adopted fetch
    /// is never without the reader it is for.
    func addReader(
        range: ByteRange, adopting adopted: (response: HTTPClientResponse, served: ByteRange, readsWhole: Bool)? = nil
    ) -> ReaderID {
        let id = ReaderID(nextReaderNumber)
        nextReaderNumber += 1
        if retired {
            failures[id] = MediaCacheError(.removed, subject: url)
            return id
        }
        if let adopted, let fetch = machine.adoptFetch(delivering: adopted.served, readsWhole: adopted.readsWhole) {
            startFetch(fetch, adopted.served, adopted: adopted.response)
        }
        perform(machine.addReader(id, range: range, now: .now))
        return id
    }

    /// The reader's next bytes from `position` on: from disk (at most `maximumLength` bytes, the
    /// state machine's bound when `nil`), or (after waiting) from the network.
    func read(_ id: ReaderID, at position: Int64, maximumLength: Int64? = nil) async throws -> ReadResult {
        if let failure = failures.removeValue(forKey: id) { throw failure }
        let (step, actions) = machine.read(id, at: position, maximumLength: maximumLength, now: .now)
        perform(actions)
        switch step {
        case .end, .received:
            return .end
        case .disk(let range):
            return .disk(range, try openFile())
        case .wait:
            if let failure = failures.removeValue(forKey: id) { throw failure }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<ReadResult, any Error>) in
                    waiters[id] = continuation
                }
            } onCancel: {
                Task { await self.removeReader(id, cancelled: true) }
            }
        }
    }

    /// The reader is done or gone; fetches only it needed stop.
    func removeReader(_ id: ReaderID, cancelled: Bool = false) {
        failures[id] = nil
        if let waiter = waiters.removeValue(forKey: id) {
            waiter.resume(throwing: cancelled ? CancellationError() : MediaCacheError(.removed, subject: url))
        }
        perform(machine.removeReader(id, now: .now))
    }

    /// Fails every reader, stops every fetch and waits for them: the resource is being removed.
    func retire() async {
        retired = true
        perform(machine.stopAll(.removed))
        await drain()
    }

    /// Waits until every fetch task has ended, then claims what was written and closes the file.
    ///
    /// Cancels nothing: a fetch nobody needs was cancelled when its last reader left, and a reader
    /// that came back meanwhile (the same coordinator is handed out until the drain ends) keeps
    /// the fetches it started. ``retire()`` stops every fetch before it drains.
    func drain() async {
        if !fetchTasks.isEmpty {
            await withCheckedContinuation { drainWaiters.append($0) }
        }
        store.claim(key: key)
        file = nil
    }

    // MARK: Fetches

    private func startFetch(_ id: FetchID, _ range: ByteRange, adopted: HTTPClientResponse? = nil) {
        var request = HTTPClientRequest(url: url, headers: configuration.requestHeaders)
        request.range = .closed(first: range.lowerBound, last: range.upperBound - 1)
        request.ifRange = metadata.ifRange
        request.bodyIsWrittenToFile = true
        let client = client
        let policy = configuration.retryPolicy
        fetchTasks[id] = Task {
            var failure: MediaCacheError?
            do {
                let response: HTTPClientResponse
                if let adopted {
                    response = adopted
                } else {
                    response = try await client.execute(request, retry: policy)
                    guard try self.fetchResponded(id, response.head) else {
                        self.fetchEnded(id, failure: nil)
                        return
                    }
                }
                if let direct = self.beginDirectWrite(id) {
                    try await response.body.write(
                        toFileDescriptor: direct.file.descriptor, at: direct.start, progressInterval: .zero
                    ) { written in
                        self.fetchWrote(id, count: written)
                    }
                } else {
                    for try await chunk in response.body {
                        guard self.fetchReceived(id, chunk) else { break }
                    }
                }
            } catch let error as MediaCacheError {
                failure = error
            } catch let error as HTTPClientError where error.kind == .cancelled {
                failure = nil
            } catch is CancellationError {
                failure = nil
            } catch {
                failure = MediaCacheError.originFailure(error, url: request.url)
            }
            self.fetchEnded(id, failure: failure)
        }
    }

    /// Judges the head of fetch `id`; returns whether to read its body.
    private func fetchResponded(_ id: FetchID, _ head: HTTPClientResponseHead) throws -> Bool {
        let response: ResourceFetchStateMachine.Response
        switch head.rangeOutcome {
        case .partial(let contentRange):
            guard let range = contentRange.range, let complete = contentRange.completeLength else {
                throw MediaCacheError(
                    .originFailed, subject: url, status: head.status,
                    detail: "Content-Range \(contentRange.headerValue) has no complete length")
            }
            let same = RepresentationCheck.sameValidators(metadata, head)
            response = .partial(range, completeLength: complete, sameRepresentation: same)
        case .ignored(let representationChanged):
            guard let length = head.completeLength else {
                throw MediaCacheError(
                    .originFailed, subject: url, status: head.status, detail: "a whole body without a length")
            }
            // A 200 to a ranged request: the same representation only when its validator matched.
            response = .whole(length: length, sameRepresentation: representationChanged == false)
        case .notSatisfiable(let completeLength):
            response = .notSatisfiable(completeLength: completeLength)
        case .notRequested, .notApplicable:
            throw MediaCacheError(.originStatus, subject: url, status: head.status)
        }
        let actions = machine.fetchResponded(id, response, now: .now)
        if actions.contains(where: { if case .discardCachedBytes = $0 { true } else { false } }) {
            var changed = MediaCacheMetadata(head: head) ?? metadata
            changed.length = machine.length
            metadata = changed
            configuration.logger.info("\(url) changed on the origin; dropping its cached bytes")
            try? store.invalidate(key: key, url: url, metadata: changed, now: Date().timeIntervalSince1970)
            // The store made a new file; writes still landing in the old one go nowhere.
            file = nil
        }
        perform(actions)
        return machine.fetches[id] != nil
    }

    /// Writes a chunk of fetch `id` and hands it to waiting readers; returns whether to go on.
    private func fetchReceived(_ id: FetchID, _ chunk: [UInt8]) -> Bool {
        guard let usable = machine.usableRange(of: id, count: Int64(chunk.count)) else { return false }
        let count = usable.count
        var stored = false
        if store.reserve(key: key, count: count) {
            do {
                let file = try openFile()
                try DataFile.write(chunk[..<Int(count)], to: file.descriptor, at: usable.lowerBound)
                store.didWrite(key: key, range: usable, reservedCount: count, now: .now)
                stored = true
            } catch {
                store.cancelReservation(key: key, count: count)
                configuration.logger.warning("cannot write to the cache file of \(url): \(error)")
            }
        }
        let now = ContinuousClock.now
        let (keepReading, actions) = machine.fetchReceived(id, range: usable, stored: stored, now: now)
        perform(actions, chunk: chunk, chunkOffset: usable.lowerBound)
        return keepReading
    }

    /// How many bytes ahead of what a direct write has written are kept reserved under the cap.
    /// Room is taken as the body arrives, as for bytes that come through memory: reserving a
    /// whole range at once (a player's `bytes=0-` is the rest of the file) evicted other entries
    /// for bytes that might never come.
    static let directWriteReservation: Int64 = 1 << 20

    /// Whether fetch `id`'s body can be written into the data file by the client's I/O thread:
    /// a range response with room under the cap for its first bytes (reserved here). The bytes
    /// then reach readers through the file.
    private func beginDirectWrite(_ id: FetchID) -> (file: DataFileHandle, start: Int64)? {
        guard let fetch = machine.fetches[id], !fetch.readsWhole, fetch.position < fetch.end else { return nil }
        let count = min(fetch.end - fetch.position, Self.directWriteReservation)
        guard store.reserve(key: key, count: count) else { return nil }
        guard let file = try? openFile() else {
            store.cancelReservation(key: key, count: count)
            return nil
        }
        directWrites[id] = DirectWrite(start: fetch.position, handled: 0, reserved: count)
        return (file, fetch.position)
    }

    /// The I/O thread has written `count` bytes of fetch `id`'s body: they are stored (within
    /// room reserved for them), and go to waiting readers; room is reserved for the next ones. A
    /// fetch no longer wanted is cancelled (bytes written past where it was to stop are the same
    /// bytes another fetch brings, and are never claimed by this one). So is a fetch denied room:
    /// the bytes it wrote past its reservation are never claimed, and the next fetch for them
    /// brings them through memory, not kept.
    private func fetchWrote(_ id: FetchID, count: Int64) {
        guard var direct = directWrites[id], count > direct.handled else { return }
        let arrived = ByteRange(direct.start + direct.handled, direct.start + count)
        direct.handled = count
        guard !direct.denied, let usable = machine.usableRange(of: id, count: arrived.count),
            usable.lowerBound == arrived.lowerBound
        else {
            directWrites[id] = direct
            fetchTasks[id]?.cancel()
            return
        }
        if usable.count > direct.reserved {
            // The I/O thread ran past the room reserved ahead of it.
            let missing = usable.count - direct.reserved
            if store.reserve(key: key, count: missing) { direct.reserved += missing } else { direct.denied = true }
        }
        let storable = ByteRange(usable.lowerBound, usable.lowerBound + min(usable.count, direct.reserved))
        direct.reserved -= storable.count
        direct.storedEnd = storable.upperBound
        if !direct.denied, let end = machine.fetches[id]?.end {
            let wanted = min(Self.directWriteReservation, end - storable.upperBound)
            if direct.reserved < wanted {
                if store.reserve(key: key, count: wanted - direct.reserved) {
                    direct.reserved = wanted
                } else {
                    direct.denied = true
                }
            }
        }
        directWrites[id] = direct
        var keepReading = !direct.denied
        if !storable.isEmpty {
            store.didWrite(key: key, range: storable, reservedCount: storable.count, now: .now)
            let (keep, actions) = machine.fetchReceived(id, range: storable, stored: true, now: .now)
            perform(actions)
            keepReading = keepReading && keep
        }
        if !keepReading { fetchTasks[id]?.cancel() }
    }

    private func fetchEnded(_ id: FetchID, failure: MediaCacheError?) {
        fetchTasks[id] = nil
        if let direct = directWrites.removeValue(forKey: id) {
            if direct.reserved > 0 { store.cancelReservation(key: key, count: direct.reserved) }
            if direct.denied { freeUnclaimedBytes(of: id, direct) }
        }
        if let failure {
            fetchErrors[id] = failure
            configuration.logger.debug("fetch of \(url) failed: \(failure)")
        }
        perform(machine.fetchEnded(id, failed: failure != nil, now: .now))
        fetchErrors[id] = nil
        if fetchTasks.isEmpty {
            store.claim(key: key)
            let waiters = drainWaiters
            drainWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// A body denied room may have been written past it (the I/O thread does not wait for the
    /// room to be granted): those bytes, never claimed, give their blocks back, so that the disk
    /// holds no more than the cap counts. Only within the fetch's own span, which no other fetch
    /// writes, and now that the transfer is over (a direct write ends only then).
    private func freeUnclaimedBytes(of id: FetchID, _ direct: DirectWrite) {
        guard let fetch = machine.fetches[id], let file else { return }
        let span = ByteRange(direct.storedEnd, max(direct.storedEnd, min(direct.start + direct.handled, fetch.end)))
        for gap in machine.available.gaps(in: span) { DataFile.punchHole(gap, in: file.descriptor) }
    }

    // MARK: Actions

    /// Performs `actions`; bytes a reader is resumed with come from `chunk` (starting at
    /// `chunkOffset`), or from the data file when there is none.
    private func perform(
        _ actions: [ResourceFetchStateMachine.Action], chunk: [UInt8]? = nil, chunkOffset: Int64 = 0
    ) {
        for action in actions {
            switch action {
            case .startFetch(let id, let range):
                if retired { continue }
                startFetch(id, range)
            case .cancelFetch(let id):
                fetchTasks[id]?.cancel()
            case .resumeReader(let id, let step):
                guard let waiter = waiters.removeValue(forKey: id) else { continue }
                switch step {
                case .received(let range):
                    guard let chunk else {
                        do {
                            waiter.resume(returning: .disk(range, try openFile()))
                        } catch {
                            waiter.resume(throwing: error)
                        }
                        continue
                    }
                    let lower = Int(range.lowerBound - chunkOffset)
                    let upper = Int(range.upperBound - chunkOffset)
                    waiter.resume(
                        returning: .bytes(lower == 0 && upper == chunk.count ? chunk : Array(chunk[lower..<upper])))
                case .disk(let range):
                    do {
                        waiter.resume(returning: .disk(range, try openFile()))
                    } catch {
                        waiter.resume(throwing: error)
                    }
                case .end, .wait:
                    waiter.resume(returning: .end)
                }
            case .failReader(let id, let reason):
                let error: MediaCacheError
                switch reason {
                case .representationChanged:
                    error = MediaCacheError(
                        .representationChanged, subject: url, detail: "the origin's copy changed while it was read")
                case .fetchFailed(let fetch):
                    error = fetchErrors[fetch] ?? MediaCacheError(.originFailed, subject: url)
                case .removed:
                    error = MediaCacheError(.removed, subject: url)
                }
                if let waiter = waiters.removeValue(forKey: id) {
                    waiter.resume(throwing: error)
                } else {
                    failures[id] = error
                }
            case .discardCachedBytes:
                break  // done by fetchResponded, which has the new metadata
            }
        }
    }

    private func openFile() throws -> DataFileHandle {
        if let file { return file }
        let descriptor = PrivateFiles.open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw MediaCacheError(
                .storageFailed, subject: path, detail: "\(SystemError.current("open", subject: path))")
        }
        let handle = DataFileHandle(descriptor: descriptor)
        file = handle
        return handle
    }
}

/// A fetch whose body the client's I/O thread writes into the data file.
private struct DirectWrite {
    /// Where the body's first byte goes.
    let start: Int64
    /// How many of the body's bytes were handed on.
    var handled: Int64
    /// Bytes reserved under the cap and not yet written.
    var reserved: Int64
    /// Set when room for more was refused: the fetch is being stopped.
    var denied = false
    /// The end of the bytes stored (claimed) so far.
    var storedEnd: Int64

    init(start: Int64, handled: Int64, reserved: Int64) {
        self.start = start
        self.handled = handled
        self.reserved = reserved
        storedEnd = start
    }
}

/// Comparing a response's validators with the cached ones.
enum RepresentationCheck {
    /// Whether `head` carries the same validators as `metadata` where both have one: strong
    /// ETags compared strongly, else Last-Modified dates; no validator to compare counts as the same.
    static func sameValidators(_ metadata: MediaCacheMetadata, _ head: HTTPClientResponseHead) -> Bool {
        if let cached = metadata.entityTag, let received = head.entityTag { return cached.strongMatches(received) }
        if let cached = metadata.lastModified, let received = head.lastModified { return cached == received }
        return true
    }
}
