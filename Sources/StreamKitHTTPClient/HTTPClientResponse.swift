import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response: its head, available as soon as it arrived, and its body, streamed.
///
/// Read the body (or drop the response) promptly: the transfer pauses once
/// ``HTTPClientConfiguration/bodyBufferLimit`` bytes wait unread, and dropping the response before
/// the body ended cancels the transfer.
public struct HTTPClientResponse: Sendable {
    /// Status, headers, final URL, range outcome.
    public let head: HTTPClientResponseHead
    /// The body, as an asynchronous sequence of byte chunks with backpressure.
    public let body: Body

    /// Creates a response from a head and a body.
    init(head: HTTPClientResponseHead, body: Body) {
        self.head = head
        self.body = body
    }

    /// The status code.
    public var status: HTTPStatus { head.status }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }
    /// The URL the response came from, after redirects.
    public var url: String { head.url }

    /// A response body: chunks of bytes in order, ending cleanly or with an ``HTTPClientError``
    /// (for a body cut short, ``HTTPClientError/Kind-swift.struct/truncatedBody`` with the offset reached).
    ///
    /// One reader at a time. The transfer is paused while the reader lags (memory stays flat),
    /// and cancelled when the reading task is cancelled or the body is dropped unread.
    public struct Body: AsyncSequence, Sendable {
        public typealias Element = [UInt8]

        let reader: BodyReader

        /// Bytes received and not yet read.
        public var bufferedByteCount: Int { reader.channel.bufferedByteCount }

        /// Stops the transfer when the rest of the body is not wanted (dropping the response does
        /// the same); reading it afterwards fails with `cancelled`.
        public func cancel() { reader.cancel() }

        public func makeAsyncIterator() -> Iterator { Iterator(reader: reader) }

        /// Reads chunks in order.
        public struct Iterator: AsyncIteratorProtocol {
            let reader: BodyReader

            /// The next chunk (never empty), or `nil` at the end of the body.
            ///
            /// - Throws: ``HTTPClientError`` when the body failed, or was cancelled.
            public mutating func next() async throws -> [UInt8]? {
                while true {
                    switch try await reader.channel.next() {
                    case .chunk(let chunk) where !chunk.isEmpty: return chunk
                    case .chunk: continue
                    case .end: return nil
                    case .written: preconditionFailure("a body written to a file directly is not iterated")
                    }
                }
            }
        }

        /// Reads the whole body into memory, refusing to hold more than `limit` bytes.
        ///
        /// Up to `limit` bytes are buffered for this reader without pausing the transfer (they
        /// would be held here anyway), so the transfer does not wait for the reading task to be
        /// scheduled when the cooperative pool is busy.
        ///
        /// - Parameter limit: The most bytes accepted.
        /// - Returns: The body.
        /// - Throws: ``HTTPClientError`` of kind `bodyTooLarge` past the limit (the transfer is
        ///   cancelled), or the body's own error.
        public func collect(upTo limit: Int) async throws -> [UInt8] {
            reader.channel.raiseHighWater(to: limit)
            var collected: [UInt8] = []
            for try await chunk in self {
                guard collected.count + chunk.count <= limit else {
                    reader.cancel()
                    throw HTTPClientError(
                        .bodyTooLarge, byteOffset: Int64(collected.count + chunk.count),
                        detail: "body exceeds \(limit) bytes")
                }
                // Often the whole body comes as one chunk: keep it rather than copy it.
                if collected.isEmpty { collected = chunk } else { collected.append(contentsOf: chunk) }
            }
            return collected
        }

        /// Writes the body into an open file at `offset` onwards, without gaps.
        ///
        /// With the libcurl backend the client's I/O thread writes each chunk into the file as it
        /// arrives (as `curl -o` does: no copy into a buffer, no hand-off per chunk) once the bytes
        /// buffered before this call are written, through a duplicate of `descriptor` that it
        /// closes when the transfer ends. Otherwise the chunks are read and written here.
        ///
        /// - Parameters:
        ///   - descriptor: A file descriptor open for writing.
        ///   - offset: Where the first byte goes.
        ///   - progressInterval: Written bytes are reported at most this often while the I/O
        ///     thread writes (the end is always reported); `.zero` reports every batch, for a
        ///     consumer that hands the bytes on as they land.
        ///   - isolation: Where `onProgress` runs: the caller's actor, by default.
        ///   - onProgress: Called with the bytes written so far, at most once per batch.
        /// - Returns: The number of bytes written.
        /// - Throws: ``HTTPClientError`` of kind `fileWriteFailed`, or the body's own error
        ///   (with every byte reported to `onProgress` in the file).
        @discardableResult
        public func write(
            toFileDescriptor descriptor: Int32, at offset: Int64, progressInterval: Duration = .milliseconds(100),
            isolation: isolated (any Actor)? = #isolation, onProgress: (Int64) -> Void = { _ in }
        ) async throws -> Int64 {
            var written: Int64 = 0
            guard reader.channel.supportsDirectWrite else {
                for try await chunk in self {
                    try FileOutput.write(chunk, to: descriptor, at: offset + written)
                    written += Int64(chunk.count)
                    onProgress(written)
                }
                return written
            }
            handOver: while true {
                switch try reader.channel.startDirectWrite(
                    descriptor: descriptor, offset: offset + written, reportInterval: progressInterval)
                {
                case .writeFirst(let chunk):
                    try FileOutput.write(chunk, to: descriptor, at: offset + written)
                    written += Int64(chunk.count)
                    onProgress(written)
                case .started:
                    break handOver
                case .ended:
                    return written
                case .fail(let error):
                    throw error
                }
            }
            let handedOver = written
            while true {
                switch try await reader.channel.next() {
                case .written(let count):
                    written = handedOver + count
                    onProgress(written)
                case .end:
                    return written
                case .chunk:
                    preconditionFailure("no chunks once the producer writes directly")
                }
            }
        }
    }
}

/// The reader's handle on a body channel: dropping the last one cancels an unfinished transfer.
final class BodyReader: Sendable {
    let channel: ResponseBodyChannel

    init(channel: ResponseBodyChannel) { self.channel = channel }

    /// Stops the transfer; the body then ends with `cancelled`.
    func cancel() { channel.consumerCancelled() }

    deinit { channel.consumerCancelled() }
}

/// What a body channel asks of the transfer's owner (the I/O loop), from the reader's side.
protocol TransferController: Sendable {
    /// Unpause transfer `id`: its reader drained the buffer.
    func resumeTransfer(_ id: Int)
    /// Stop transfer `id`, failing it with `error`.
    func cancelTransfer(_ id: Int, error: HTTPClientError)
}

/// The channel between the I/O thread (producer) and the body's reader: a
/// ``ResponseBodyStateMachine`` under a lock, plus the reader's continuation. Decisions are taken
/// under the lock; continuations are resumed and the I/O thread is called after releasing it.
final class ResponseBodyChannel: Sendable {
    private struct State: Sendable {
        var machine: ResponseBodyStateMachine
        var waiter: CheckedContinuation<ResponseBodyStateMachine.Delivery, any Error>?
    }

    private let state: Mutex<State>
    private let controller: any TransferController
    let transferID: Int
    /// Whether the producer can write into a file itself (the libcurl backend).
    let supportsDirectWrite: Bool

    init(highWater: Int, transferID: Int, controller: any TransferController, supportsDirectWrite: Bool = false) {
        state = Mutex(State(machine: ResponseBodyStateMachine(highWater: highWater)))
        self.transferID = transferID
        self.controller = controller
        self.supportsDirectWrite = supportsDirectWrite
    }

    var bufferedByteCount: Int { state.withLock { $0.machine.bufferedCount } }

    // MARK: Producer side (I/O thread)

    func receive(_ bytes: UnsafeRawBufferPointer) -> ResponseBodyStateMachine.ReceiveAction {
        state.withLock { $0.machine.receive(bytes) }
    }

    /// The producer wrote `count` bytes into the file, as `.writeDirectly` asked.
    func wroteDirectly(_ count: Int) {
        state.withLock { $0.machine.wroteDirectly(count) }
    }

    /// Where a producer that moves bytes into the file itself writes next, if it does.
    var directWriteTarget: (descriptor: Int32, offset: Int64)? {
        state.withLock { $0.machine.directWriteTarget }
    }

    /// The producer moved `count` bytes into the file at ``directWriteTarget``.
    func movedDirectly(_ count: Int) {
        state.withLock { $0.machine.movedDirectly(count) }
    }

    /// Whether the producer is paused (a full buffer, or held until asked) until the consumer
    /// resumes it through the controller.
    var isProducerPaused: Bool { state.withLock { $0.machine.isProducerPaused } }

    /// The producer waits for the consumer's first read or file before reading the body.
    func holdUntilAsked() {
        state.withLock { $0.machine.holdUntilAsked() }
    }

    func receiveUnconditionally(_ bytes: UnsafeRawBufferPointer) -> ResponseBodyStateMachine.ReceiveAction {
        state.withLock { $0.machine.receiveUnconditionally(bytes) }
    }

    func flush(now: ContinuousClock.Instant) {
        let (action, waiter) = state.withLock { state in
            let action = state.machine.flush(now: now)
            return (action, action == .none ? nil : state.waiter.take())
        }
        Self.perform(action, waiter)
    }

    func finish(_ error: HTTPClientError?) {
        let (action, waiter) = state.withLock { state in
            let action = state.machine.finish(error)
            return (action, action == .none ? nil : state.waiter.take())
        }
        Self.perform(action, waiter)
    }

    // MARK: Reader side

    func next() async throws -> ResponseBodyStateMachine.Delivery {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<ResponseBodyStateMachine.Delivery, any Error>) in
                let action = state.withLock { state in
                    let action = state.machine.next()
                    if action == .wait { state.waiter = continuation }
                    return action
                }
                switch action {
                case .wait:
                    break
                case .deliver(let delivery, let resumeProducer):
                    if resumeProducer { controller.resumeTransfer(transferID) }
                    continuation.resume(returning: delivery)
                case .fail(let error):
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            consumerCancelled()
        }
    }

    /// Hands the producer a duplicate of `descriptor` (closed by ``releaseDirectWrite()`` when the
    /// transfer ends), so the caller may close its own whenever it likes.
    func startDirectWrite(
        descriptor: Int32, offset: Int64, reportInterval: Duration
    ) throws -> ResponseBodyStateMachine.DirectWriteAction {
        // Close-on-exec: a child another thread starts must not keep the file open.
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else {
            let failure = SystemError.current("fcntl(F_DUPFD_CLOEXEC)", subject: "descriptor \(descriptor)")
            throw HTTPClientError.fileWriteFailed(failure, byteOffset: offset)
        }
        let action = state.withLock {
            $0.machine.startDirectWrite(descriptor: duplicate, offset: offset, reportInterval: reportInterval)
        }
        guard case .started(let resumeProducer) = action else {
            close(duplicate)
            return action
        }
        if resumeProducer { controller.resumeTransfer(transferID) }
        return action
    }

    /// Closes the producer's file descriptor, if it had one. Called once the transfer ended.
    func releaseDirectWrite() {
        if let descriptor = state.withLock({ $0.machine.releaseDirectWriteDescriptor() }) { close(descriptor) }
    }

    func raiseHighWater(to limit: Int) {
        state.withLock { $0.machine.raiseHighWater(to: limit) }
    }

    func consumerCancelled() {
        let (cancelTransfer, action, waiter) = state.withLock { state in
            let (cancelTransfer, action) = state.machine.consumerCancelled()
            return (cancelTransfer, action, action == .none ? nil : state.waiter.take())
        }
        Self.perform(action, waiter)
        if cancelTransfer { controller.cancelTransfer(transferID, error: .cancelled) }
    }

    private static func perform(
        _ action: ResponseBodyStateMachine.WakeAction,
        _ waiter: CheckedContinuation<ResponseBodyStateMachine.Delivery, any Error>?
    ) {
        guard case .resume(let result) = action, let waiter else { return }
        switch result {
        case .success(let delivery): waiter.resume(returning: delivery)
        case .failure(let error): waiter.resume(throwing: error)
        }
    }
}

/// Positional writes of body bytes into files.
enum FileOutput {
    /// Writes all of `bytes` at `offset`, retrying short writes and interruptions.
    static func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, to: descriptor, at: offset) }
    }

    /// Writes all of `buffer` at `offset`, retrying short writes and interruptions.
    static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64) throws {
        do {
            try PositionalWrite.write(buffer, to: descriptor, at: offset, subject: "descriptor \(descriptor)")
        } catch {
            throw HTTPClientError.fileWriteFailed(error.error, byteOffset: error.byteOffset)
        }
    }
}
