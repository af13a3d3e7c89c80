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
///
/// A consumer that keeps the whole body in memory (up to a limit) gains nothing from pausing the
/// producer below that limit, and would make the transfer wait for its task to be scheduled once
/// per buffer: it raises `highWater` to the limit (``raiseHighWater(to:)``).
///
/// Direct writes: a consumer that only stores the body in a file can hand the file to the
/// producer (``startDirectWrite(descriptor:offset:)``). Bytes buffered before are given back to
/// the consumer to write first; from then on the producer writes each chunk at the next offset
/// itself, as libcurl delivers it (no copy, no hand-off), and the consumer is told how many bytes
/// were written. The file grows without gaps either way. The producer owns the descriptor it was
/// given until the transfer ends (the edge passes a duplicate and closes it then).
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
        /// Write them into `descriptor` at `offset` now (they count as written).
        case writeDirectly(descriptor: Int32, offset: Int64)
    }

    /// What a consumer is handed.
    enum Delivery: Equatable, Sendable {
        /// Body bytes.
        case chunk([UInt8])
        /// In direct-write mode: the producer has written this many bytes in all.
        case written(Int64)
        /// The body ended cleanly.
        case end
    }

    /// What to do for a consumer waiting in ``next()``.
    enum WakeAction: Equatable, Sendable {
        case none
        /// Resume the waiting consumer with a delivery or an error.
        case resume(Result<Delivery, HTTPClientError>)
    }

    /// What the consumer gets from ``next()``.
    enum NextAction: Equatable, Sendable {
        /// A delivery; when `resumeProducer` is set, the consumer must ask the I/O thread to unpause.
        case deliver(Delivery, resumeProducer: Bool)
        /// Nothing yet: wait to be resumed by ``flush()`` or ``finish(_:)``.
        case wait
        /// The body ended with an error (after every buffered or written byte was reported).
        case fail(HTTPClientError)
    }

    /// What ``startDirectWrite(descriptor:offset:)`` asks of the consumer.
    enum DirectWriteAction: Equatable, Sendable {
        /// Write these buffered bytes at the offset yourself, then ask again past them.
        case writeFirst([UInt8])
        /// The producer writes from now on; wait in ``next()`` for `.written`. When
        /// `resumeProducer` is set, ask the I/O thread to unpause.
        case started(resumeProducer: Bool)
        /// The body ended cleanly with nothing more to write.
        case ended
        /// The body ended with an error.
        case fail(HTTPClientError)
    }

    /// The most bytes buffered before the producer is paused.
    private(set) var highWater: Int
    private var buffer: [UInt8] = []
    private var producer: Producer = .streaming
    private var consumerWaiting = false
    private var consumerGone = false
    /// In direct-write mode: the consumer went and the transfer was asked to stop.
    private var cancelRequested = false
    /// The capacity a new buffer starts with: about the size of the last chunk taken, so that a
    /// steady transfer allocates once per chunk and never grows a buffer by copying.
    private var reserveHint = 64 << 10
    /// In direct-write mode, where the producer writes.
    private var sink: (descriptor: Int32, nextOffset: Int64)?
    /// Bytes the producer wrote directly, and how many of them the consumer was told about.
    private var written: Int64 = 0
    private var reportedWritten: Int64 = 0
    /// Direct-write progress wakes a waiting consumer at most this often (the end always does).
    private(set) var writeReportInterval: Duration
    private var lastWriteReport: ContinuousClock.Instant?

    /// Creates an empty buffer.
    init(highWater: Int, writeReportInterval: Duration = .milliseconds(100)) {
        precondition(highWater > 0)
        self.highWater = Self.bounded(highWater)
        self.writeReportInterval = writeReportInterval
    }

    /// A mark past any memory means no mark; bounded so that sums with it cannot overflow.
    private static func bounded(_ highWater: Int) -> Int { min(highWater, Int.max / 2) }

    /// The bytes buffered now.
    var bufferedCount: Int { buffer.count }

    /// Whether the producer is paused.
    var isProducerPaused: Bool {
        if case .paused = producer { return true }
        return false
    }

    /// Whether the producer writes into a file itself.
    var isWritingDirectly: Bool { sink != nil }

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
            if var sink {
                // Counted as written once the producer says it wrote them (`wroteDirectly`): a
                // consumer told earlier could read the file before the bytes are in it.
                let offset = sink.nextOffset
                sink.nextOffset += Int64(bytes.count)
                self.sink = sink
                return .writeDirectly(descriptor: sink.descriptor, offset: offset)
            }
            if buffer.count >= highWater {
                producer = .paused
                return .pause
            }
            if buffer.isEmpty { buffer.reserveCapacity(max(reserveHint, bytes.count)) }
            buffer.append(contentsOf: bytes)
            return .accepted
        }
    }

    /// The producer wrote the `count` bytes a `.writeDirectly` answer asked it to write.
    mutating func wroteDirectly(_ count: Int) {
        written += Int64(count)
    }

    /// Where a producer that moves bytes into the file without holding them (`splice`) writes
    /// next, when the consumer handed it a file and still wants the body; it then reports the
    /// bytes with ``movedDirectly(_:)``.
    var directWriteTarget: (descriptor: Int32, offset: Int64)? {
        guard !consumerGone, case .streaming = producer, let sink, sink.descriptor >= 0 else { return nil }
        return (sink.descriptor, sink.nextOffset)
    }

    /// The producer moved `count` bytes into the file at ``directWriteTarget`` (they count as written).
    mutating func movedDirectly(_ count: Int) {
        guard var sink else { return }
        sink.nextOffset += Int64(count)
        self.sink = sink
        written += Int64(count)
    }

    /// The producer waits, before reading the body, until the consumer says how it reads it: by
    /// chunks (``next()``) or into a file (``startDirectWrite(descriptor:offset:reportInterval:)``),
    /// each of which resumes it, as taking a full buffer does. A producer that can move bytes
    /// into a file without copying them gains that for the whole body.
    mutating func holdUntilAsked() {
        if case .streaming = producer { producer = .paused }
    }

    /// The producer delivers `bytes` it cannot take back (URLSession): they are buffered whatever
    /// the fill, and the answer says whether to pause the producer now. No direct writes.
    mutating func receiveUnconditionally(_ bytes: UnsafeRawBufferPointer) -> ReceiveAction {
        guard !consumerGone else { return .abort }
        if case .finished = producer { return .abort }
        if buffer.isEmpty { buffer.reserveCapacity(max(reserveHint, bytes.count)) }
        buffer.append(contentsOf: bytes)
        guard buffer.count >= highWater else { return .accepted }
        producer = .paused
        return .pause
    }

    /// End of an I/O loop iteration: hand what arrived to a waiting consumer (direct-write
    /// progress at most once per `writeReportInterval`, so a fast file download wakes its
    /// reader a few times a second, not once per batch).
    mutating func flush(now: ContinuousClock.Instant) -> WakeAction {
        guard consumerWaiting else { return .none }
        if sink != nil {
            guard written > reportedWritten else { return .none }
            if let lastWriteReport, lastWriteReport.duration(to: now) < writeReportInterval { return .none }
            lastWriteReport = now
            consumerWaiting = false
            reportedWritten = written
            return .resume(.success(.written(written)))
        }
        guard !buffer.isEmpty else { return .none }
        consumerWaiting = false
        return .resume(.success(.chunk(takeBuffer())))
    }

    /// The transfer ended, cleanly (`nil`) or with an error.
    mutating func finish(_ error: HTTPClientError?) -> WakeAction {
        if case .finished = producer { return .none }
        // A transfer the consumer stopped fails as cancelled, whatever libcurl made of the
        // refused bytes (a write error).
        let error = cancelRequested && error != nil ? .cancelled : error
        producer = .finished(error)
        guard consumerWaiting else { return .none }
        consumerWaiting = false
        if sink != nil, written > reportedWritten {
            reportedWritten = written
            return .resume(.success(.written(written)))
        }
        if !buffer.isEmpty { return .resume(.success(.chunk(takeBuffer()))) }
        if let error { return .resume(.failure(error)) }
        return .resume(.success(.end))
    }

    // MARK: Consumer

    /// The consumer will hold up to `limit` bytes of the body anyway: buffer that many before
    /// pausing the producer. Never lowers the mark.
    mutating func raiseHighWater(to limit: Int) {
        highWater = max(highWater, Self.bounded(limit))
    }

    /// The consumer asks for the next delivery.
    mutating func next() -> NextAction {
        precondition(!consumerWaiting, "a response body has one reader at a time")
        if sink != nil, written > reportedWritten {
            reportedWritten = written
            return .deliver(.written(written), resumeProducer: false)
        }
        if !buffer.isEmpty {
            let chunk = takeBuffer()
            if case .paused = producer {
                producer = .streaming
                return .deliver(.chunk(chunk), resumeProducer: true)
            }
            return .deliver(.chunk(chunk), resumeProducer: false)
        }
        switch producer {
        case .finished(let error?):
            return .fail(error)
        case .finished(nil):
            return .deliver(.end, resumeProducer: false)
        case .paused:
            // Held until asked (``holdUntilAsked()``): the first read resumes it. (A producer
            // paused on a full buffer is resumed by taking that buffer, above.)
            producer = .streaming
            return .deliver(.chunk([]), resumeProducer: true)
        case .streaming:
            consumerWaiting = true
            return .wait
        }
    }

    /// The consumer hands the file it would write the body into to the producer; progress then
    /// wakes it at most once per `reportInterval` (when given).
    mutating func startDirectWrite(
        descriptor: Int32, offset: Int64, reportInterval: Duration? = nil
    ) -> DirectWriteAction {
        precondition(!consumerWaiting && sink == nil, "direct writes start once, from an idle reader")
        if let reportInterval { writeReportInterval = reportInterval }
        // Bytes already buffered go first, written by the consumer; a paused producer stays
        // paused meanwhile, so the next call finds the buffer empty.
        if !buffer.isEmpty { return .writeFirst(takeBuffer()) }
        switch producer {
        case .finished(let error?):
            return .fail(error)
        case .finished(nil):
            return .ended
        case .paused:
            producer = .streaming
            sink = (descriptor, offset)
            return .started(resumeProducer: true)
        case .streaming:
            sink = (descriptor, offset)
            return .started(resumeProducer: false)
        }
    }

    /// The producer is done with direct writes for good (the transfer ended): the descriptor it
    /// was given, to close, once.
    mutating func releaseDirectWriteDescriptor() -> Int32? {
        guard var sink, sink.descriptor >= 0 else { return nil }
        let descriptor = sink.descriptor
        sink.descriptor = -1
        self.sink = sink
        return descriptor
    }

    /// The consumer stopped reading (its task was cancelled or it dropped the body).
    ///
    /// - Returns: Whether the transfer is still running and must be cancelled, and a waiting
    ///   consumer to resume with the cancellation.
    ///
    /// In direct-write mode a waiting consumer is not resumed here but by ``finish(_:)``: the
    /// producer still writes the bytes it gathered before it ends, and a consumer told of the
    /// cancellation at once could measure or reuse the file while they land.
    mutating func consumerCancelled() -> (cancelTransfer: Bool, wake: WakeAction) {
        consumerGone = true
        buffer = []
        if sink != nil, !isFinished {
            defer { cancelRequested = true }
            return (!cancelRequested, .none)
        }
        var wake = WakeAction.none
        if consumerWaiting {
            consumerWaiting = false
            wake = .resume(.failure(.cancelled))
        }
        if isFinished { return (false, wake) }
        producer = .finished(.cancelled)
        return (true, wake)
    }

    private var isFinished: Bool {
        if case .finished = producer { return true }
        return false
    }

    private mutating func takeBuffer() -> [UInt8] {
        var chunk: [UInt8] = []
        swap(&chunk, &buffer)
        reserveHint = min(max(chunk.count + (16 << 10), 64 << 10), highWater + (64 << 10))
        return chunk
    }
}
