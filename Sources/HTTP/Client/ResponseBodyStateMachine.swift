/// The buffer between libcurl's write callback (the producer, on the I/O thread) and the task
/// reading a response body (the consumer), as a pure state machine with backpressure.
///
/// The producer appends while fewer than `highWater` bytes are buffered and is told to pause
/// otherwise (libcurl keeps the refused bytes and stops reading the socket). The consumer takes
/// everything buffered at once; if the producer was paused, taking is what resumes it, and the
/// consumer is the one told to ask for that, so exactly one side ever unpauses. Memory per body
/// stays under `highWater` plus one libcurl chunk (16 KB), plus the chunk the consumer holds.
///
/// A waiting consumer is handed data at the end of each I/O loop iteration (``flush()``) rather
/// than on every 16 KB callback, so a fast transfer wakes its reader once per batch.
struct ResponseBodyStateMachine: Sendable {
    private enum Producer: Sendable {
        case streaming
        case paused
        case finished(HTTPClientError?)
    }

    /// What the producer does with bytes it offered.
    enum ReceiveAction: Equatable, Sendable {
        /// They were buffered.
        case accepted
        /// Nothing was buffered: pause the transfer until the consumer asks to resume.
        case pause
        /// Nothing was buffered: the consumer is gone or the body has ended; abort the transfer.
        case abort
    }

    /// What to do for a consumer waiting in ``next()``.
    enum WakeAction: Equatable, Sendable {
        case none
        /// Resume the waiting consumer with a chunk (`nil` at the end) or an error.
        case resume(Result<[UInt8]?, HTTPClientError>)
    }

    /// What the consumer gets from ``next()``.
    enum NextAction: Equatable, Sendable {
        /// A chunk; when `resumeProducer` is set, the consumer must ask the I/O thread to unpause.
        case chunk([UInt8], resumeProducer: Bool)
        /// Nothing yet: wait to be resumed by ``flush()`` or ``finish(_:)``.
        case wait
        /// The body ended cleanly.
        case end
        /// The body ended with an error (after every buffered byte was taken).
        case fail(HTTPClientError)
    }

    /// The most bytes buffered before the producer is paused.
    let highWater: Int
    private var buffer: [UInt8] = []
    private var producer: Producer = .streaming
    private var consumerWaiting = false
    private var consumerGone = false
    /// The capacity a new buffer starts with: about the size of the last chunk taken, so that a
    /// steady transfer allocates once per chunk and never grows a buffer by copying.
    private var reserveHint = 64 << 10

    /// Creates an empty buffer.
    init(highWater: Int) {
        precondition(highWater > 0)
        self.highWater = highWater
    }

    /// The bytes buffered now.
    var bufferedCount: Int { buffer.count }

    /// Whether the producer is paused.
    var isProducerPaused: Bool {
        if case .paused = producer { return true }
        return false
    }

    // MARK: Producer (I/O thread)

    /// The producer offers `bytes`.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> ReceiveAction {
        guard !consumerGone else { return .abort }
        switch producer {
        case .finished:
            return .abort
        case .paused:
            return .pause
        case .streaming:
            if buffer.count >= highWater {
                producer = .paused
                return .pause
            }
            if buffer.isEmpty { buffer.reserveCapacity(max(reserveHint, bytes.count)) }
            buffer.append(contentsOf: bytes)
            return .accepted
        }
    }

    /// The producer delivers `bytes` it cannot take back (URLSession): they are buffered whatever
    /// the fill, and the answer says whether to pause the producer now.
    mutating func receiveUnconditionally(_ bytes: UnsafeRawBufferPointer) -> ReceiveAction {
        guard !consumerGone else { return .abort }
        if case .finished = producer { return .abort }
        if buffer.isEmpty { buffer.reserveCapacity(max(reserveHint, bytes.count)) }
        buffer.append(contentsOf: bytes)
        guard buffer.count >= highWater else { return .accepted }
        producer = .paused
        return .pause
    }

    /// End of an I/O loop iteration: hand buffered bytes to a waiting consumer.
    mutating func flush() -> WakeAction {
        guard consumerWaiting, !buffer.isEmpty else { return .none }
        consumerWaiting = false
        return .resume(.success(takeBuffer()))
    }

    /// The transfer ended, cleanly (`nil`) or with an error.
    mutating func finish(_ error: HTTPClientError?) -> WakeAction {
        if case .finished = producer { return .none }
        producer = .finished(error)
        guard consumerWaiting else { return .none }
        consumerWaiting = false
        if !buffer.isEmpty { return .resume(.success(takeBuffer())) }
        if let error { return .resume(.failure(error)) }
        return .resume(.success(nil))
    }

    // MARK: Consumer

    /// The consumer asks for the next chunk.
    mutating func next() -> NextAction {
        precondition(!consumerWaiting, "a response body has one reader at a time")
        if !buffer.isEmpty {
            let chunk = takeBuffer()
            if case .paused = producer {
                producer = .streaming
                return .chunk(chunk, resumeProducer: true)
            }
            return .chunk(chunk, resumeProducer: false)
        }
        switch producer {
        case .finished(let error?):
            return .fail(error)
        case .finished(nil):
            return .end
        case .paused:
            // Unreachable: the producer pauses only with a full buffer, and taking it resumes.
            producer = .streaming
            return .chunk([], resumeProducer: true)
        case .streaming:
            consumerWaiting = true
            return .wait
        }
    }

    /// The consumer stopped reading (its task was cancelled or it dropped the body).
    ///
    /// - Returns: Whether the transfer is still running and must be cancelled, and a waiting
    ///   consumer to resume with the cancellation.
    mutating func consumerCancelled() -> (cancelTransfer: Bool, wake: WakeAction) {
        consumerGone = true
        buffer = []
        var wake = WakeAction.none
        if consumerWaiting {
            consumerWaiting = false
            wake = .resume(.failure(.cancelled))
        }
        if case .finished = producer { return (false, wake) }
        producer = .finished(.cancelled)
        return (true, wake)
    }

    private mutating func takeBuffer() -> [UInt8] {
        var chunk: [UInt8] = []
        swap(&chunk, &buffer)
        reserveHint = min(max(chunk.count + (16 << 10), 64 << 10), highWater + (64 << 10))
        return chunk
    }
}
