import StreamKitCore
import StreamKitHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client connection: owns the socket and a ``HTTPServerConnectionStateMachine``, and does
/// the I/O the machine asks for. Lives on its loop's thread only.
final class HTTPServerConnection {
    private enum Output {
        /// Bytes to send from `offset`.
        case bytes([UInt8], offset: Int)
        /// A file region's bytes from `offset` to `end` (absolute in the file) to send.
        case file(HTTPFileRegion, offset: Int64, end: Int64)
        /// The current response is complete once everything before this is sent.
        case responseEnd
    }

    private struct StreamState {
        let serial: UInt64
        let chunked: Bool
        /// For a stream with a handler-given Content-Length: bytes still owed.
        var remainingLength: Int64?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    let id: UInt64
    let socket: Int32
    let remoteAddress: String
    // Unowned and unchecked: the loop owns its connections and closes every one before it
    // stops, so it always outlives them; the checked form costs an atomic per access.
    private unowned(unsafe) let loop: ServerEventLoop
    private var machine: HTTPServerConnectionStateMachine
    private var output: [Output] = []
    private var outputStart = 0
    private var pendingOutputBytes: Int64 = 0
    private var serial: UInt64 = 0
    private var currentHead: HTTPServerRequestHead?
    private var responseStarted = false
    private var stream: StreamState?
    /// The task running the current request's handler or body producer, cancelled if the
    /// connection closes first (a handler waiting on the network has no one left to answer).
    private var work: Task<Void, Never>?
    private var flushing = false
    private var readDeferred = false
    private(set) var isClosed = false
    /// Whether the server's connection table last heard that this connection is idle.
    private var reportedIdle = true

    private static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    private static let lastChunk = Array("0\r\n\r\n".utf8)

    init(id: UInt64, socket: Int32, remoteAddress: String, loop: ServerEventLoop) {
        self.id = id
        self.socket = socket
        self.remoteAddress = remoteAddress
        self.loop = loop
        self.machine = HTTPServerConnectionStateMachine(
            limits: loop.context.configuration.limits, timeouts: loop.context.timeouts, now: loop.now)
    }

    // MARK: Events from the loop

    /// Whether the connection is between requests: nothing of one received, nothing being sent.
    var isIdle: Bool { !isClosed && machine.isIdle && outputStart == output.count }

    /// The socket may have bytes (or an end of input) to read.
    func readable(hangUp: Bool) {
        guard !isClosed else { return }
        defer { reportIdleChange() }
        let buffer = loop.readBuffer
        while machine.wantsInput {
            let count = read(socket, buffer.baseAddress, buffer.count)
            if count > 0 {
                machine.received(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), now: loop.now)
                perform(machine.nextAction(now: loop.now))
                if isClosed { return }
                // A short read drained the socket; only a hang-up still needs the read that returns 0.
                if count < buffer.count && !hangUp { return }
            } else if count == 0 {
                machine.inputEnded()
                perform(machine.nextAction(now: loop.now))
                return
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                close()
                return
            }
        }
        // Enough pipelined requests are buffered; read the rest once the current one is answered.
        readDeferred = true
    }

    /// The socket can take more bytes.
    func writable() {
        guard !isClosed else { return }
        flush()
    }

    /// Timeouts.
    func tick() {
        guard !isClosed else { return }
        perform(machine.tick(now: loop.now))
    }

    /// The server is stopping.
    func shutdown() {
        guard !isClosed else { return }
        perform(machine.shutdown())
    }

    /// A task handler's response for request `serial`.
    func responseReady(serial: UInt64, _ response: HTTPServerResponse) {
        guard !isClosed, serial == self.serial, currentHead != nil, !responseStarted else { return }
        send(response)
    }

    /// A part (bytes, or a file region) of the streaming body of response `serial`.
    func streamChunk(serial: UInt64, _ part: HTTPBodyPart, continuation: CheckedContinuation<Void, any Error>) {
        guard !isClosed, var stream, stream.serial == serial else {
            continuation.resume(throwing: HTTPServerError.connectionClosed)
            return
        }
        var bytes: [UInt8] = []
        var file: (region: HTTPFileRegion, end: Int64)?
        switch part {
        case .bytes(let chunk): bytes = chunk
        case .file(let region): file = (region, region.range.upperBound)
        }
        if let remaining = stream.remainingLength {
            if part.count > remaining {
                if let region = file?.region {
                    file?.end = region.range.lowerBound + remaining
                } else {
                    bytes = Array(bytes.prefix(Int(remaining)))
                }
            }
            stream.remainingLength = remaining - min(part.count, remaining)
        }
        // One writer at a time is the contract; should a producer write from two tasks at once,
        // the earlier one is let go rather than left waiting forever.
        let earlier = stream.waiter
        stream.waiter = continuation
        self.stream = stream
        earlier?.resume()
        if let (region, end) = file {
            // Nothing for an empty region (a chunk of size 0 would end a chunked body).
            let count = end - region.range.lowerBound
            if count > 0 {
                if stream.chunked { enqueue(Self.chunkSizeLine(Int(count))) }
                output.append(.file(region, offset: region.range.lowerBound, end: end))
                pendingOutputBytes += count
                if stream.chunked { enqueue([0x0D, 0x0A]) }
            }
        } else {
            if stream.chunked {
                var framed = Self.chunkSizeLine(bytes.count)
                framed.reserveCapacity(framed.count + bytes.count + 2)
                framed += bytes
                framed += [0x0D, 0x0A]
                bytes = framed
            }
            enqueue(bytes)
        }
        flush()
        resumeWriterIfRoom()
    }

    private static func chunkSizeLine(_ count: Int) -> [UInt8] {
        Array(String(count, radix: 16).utf8) + [0x0D, 0x0A]
    }

    /// The streaming body of response `serial` ended (`failed`: its producer threw).
    func streamEnded(serial: UInt64, failed: Bool) {
        guard !isClosed, let stream, stream.serial == serial else { return }
        if failed || (stream.remainingLength ?? 0) > 0 {
            // The body cannot be completed; closing without the last chunk tells the client so.
            close()
            return
        }
        if stream.chunked { enqueue(Self.lastChunk) }
        output.append(.responseEnd)
        flush()
    }

    // MARK: Actions

    private func perform(_ first: HTTPServerConnectionStateMachine.Action) {
        var action = first
        while !isClosed {
            switch action {
            case .wait:
                return
            case .sendContinue:
                enqueue(Self.continueBytes)
                flush()
            case .dispatch(let head, let body):
                dispatch(head, body: body)
                return
            case .reject(let status):
                reject(status)
                return
            case .close:
                close()
                return
            case .lingerThenClose:
                _ = shutdownWriting(socket)
                readable(hangUp: true)
                return
            }
            action = machine.nextAction(now: loop.now)
        }
    }

    private func dispatch(_ head: HTTPServerRequestHead, body: [UInt8]) {
        serial += 1
        currentHead = head
        responseStarted = false
        let request = HTTPServerRequest(head: head, body: body, remoteAddress: remoteAddress)
        switch loop.context.dispatcher.decide(request) {
        case .respond(let response):
            send(response)
        case .runTask(let handler, let request):
            work = loop.runTask(handler, request, connection: id, serial: serial)
        }
    }

    private func reject(_ status: HTTPStatus) {
        serial += 1
        currentHead = HTTPServerRequestHead(method: .get, target: "/", version: .http11)
        responseStarted = false
        loop.context.logger.debug("rejecting request from \(remoteAddress) with \(status.rawValue)")
        send(.status(status))
    }

    /// Writes the head and starts the body of the response to the current request.
    private func send(_ response: HTTPServerResponse) {
        guard let head = currentHead else { return }
        responseStarted = true
        let status = response.status.rawValue
        let bodyAllowed = !(100..<200 ~= status || status == 204 || status == 304)
        let sendsBody = bodyAllowed && head.method != .head

        var framing: HTTPResponseHeadEncoder.Framing
        var streamLength: Int64?
        var canKeepAlive = true
        switch response.body {
        case .empty, .bytes, .file:
            framing = bodyAllowed ? .length(response.body.knownLength ?? 0) : .none
        case .stream:
            if let declared = response.headers["Content-Length"].flatMap(HTTPRequestParser.decimal) {
                framing = .length(declared)
                streamLength = declared
            } else if head.version == .http11 {
                framing = .chunked
            } else {
                framing = .none
                canKeepAlive = false
            }
            if !bodyAllowed { framing = .none }
        }
        if !canKeepAlive && sendsBody { machine.forbidKeepAlive() }
        let keepAlive = machine.responseHeadWillBeSent()

        var bytes: [UInt8] = []
        if case .file(let region) = response.body, sendsBody, region.range.count <= Self.inlineFileLimit {
            bytes.reserveCapacity(512 + Int(region.range.count))
        } else if case .bytes(let body) = response.body, sendsBody {
            bytes.reserveCapacity(512 + body.count)
        } else {
            bytes.reserveCapacity(512)
        }
        HTTPResponseHeadEncoder.encode(
            status: response.status, headers: response.headers, framing: framing, keepAlive: keepAlive,
            announceKeepAlive: head.version == .http10, date: loop.currentDate(),
            serverName: loop.context.configuration.serverName,
            extraHeaders: loop.context.dispatcher.corsHeaders(for: head), into: &bytes)

        guard sendsBody else {
            enqueue(bytes)
            output.append(.responseEnd)
            flush()
            return
        }
        switch response.body {
        case .empty:
            enqueue(bytes)
            output.append(.responseEnd)
        case .bytes(let body):
            bytes += body
            enqueue(bytes)
            output.append(.responseEnd)
        case .file(let region) where region.range.count <= Self.inlineFileLimit:
            // A small file costs less copied behind its head and sent in one call than spliced.
            guard Self.appendFile(region, to: &bytes) else {
                loop.context.logger.warning("file shrank before it was sent to \(remoteAddress)")
                close()
                return
            }
            enqueue(bytes)
            output.append(.responseEnd)
        case .file(let region):
            enqueue(bytes)
            if !region.range.isEmpty {
                output.append(.file(region, offset: region.range.lowerBound, end: region.range.upperBound))
                pendingOutputBytes += region.range.count
            }
            output.append(.responseEnd)
        case .stream(let body):
            enqueue(bytes)
            stream = StreamState(serial: serial, chunked: framing == .chunked, remainingLength: streamLength)
            work = loop.runProducer(body, connection: id, serial: serial)
        }
        flush()
    }

    // MARK: Writing

    /// Files up to this size are read into the response's buffer instead of sent with `sendfile`.
    static let inlineFileLimit: Int64 = 16 * 1024

    /// Appends the region's bytes; false when the file ended before the region did.
    private static func appendFile(_ region: HTTPFileRegion, to bytes: inout [UInt8]) -> Bool {
        let count = Int(region.range.count)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        var done = 0
        while done < count {
            let read = bytes.withUnsafeMutableBytes {
                pread(
                    region.fileDescriptor, $0.baseAddress! + start + done, count - done,
                    off_t(region.range.lowerBound) + off_t(done))
            }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return false }
            done += read
        }
        return true
    }

    private func enqueue(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        pendingOutputBytes += Int64(bytes.count)
        output.append(.bytes(bytes, offset: 0))
    }

    private func flush() {
        guard !flushing, !isClosed else { return }
        flushing = true
        defer { flushing = false }
        while !isClosed && outputStart < output.count {
            // What one send took, and what is left of the item after it.
            let sent: Int
            let rest: Output
            switch output[outputStart] {
            case .bytes(let bytes, let offset):
                let more: Bool
                if outputStart + 1 < output.count, case .file = output[outputStart + 1] {
                    more = true
                } else {
                    more = false
                }
                sent = bytes.withUnsafeBytes {
                    ServerSocket.send(socket, UnsafeRawBufferPointer(rebasing: $0[offset...]), more: more)
                }
                // Once all is sent, a marker takes the item's place, releasing the bytes at once.
                rest = offset + sent == bytes.count ? .responseEnd : .bytes(bytes, offset: offset + sent)
            case .file(let region, let offset, let end):
                sent = ServerSocket.sendFile(socket, file: region.fileDescriptor, offset: offset, count: end - offset)
                if sent == 0 {
                    // The file is shorter than when the response was made: the promised length
                    // cannot be kept, so the connection must end.
                    loop.context.logger.warning("file shrank while being sent to \(remoteAddress)")
                    close()
                    return
                }
                let next = offset + Int64(max(sent, 0))
                rest = next == end ? .responseEnd : .file(region, offset: next, end: end)
            case .responseEnd:
                outputStart += 1
                finishResponse()
                continue
            }
            guard sent >= 0 else {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    machine.writeBlocked(now: loop.now)
                    break
                }
                close()
                return
            }
            machine.writeProgressed()
            pendingOutputBytes -= Int64(sent)
            output[outputStart] = rest
            if case .responseEnd = rest { outputStart += 1 }  // this item is done: skip its marker
        }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 16)
            outputStart = 0
        } else if outputStart > 32 {
            output.removeFirst(outputStart)
            outputStart = 0
        }
        resumeWriterIfRoom()
    }

    private func finishResponse() {
        currentHead = nil
        responseStarted = false
        stream = nil
        work = nil
        let action = machine.responseFinished(now: loop.now)
        perform(action)
        if !isClosed && readDeferred && machine.wantsInput {
            readDeferred = false
            readable(hangUp: true)
        }
        reportIdleChange()
    }

    /// Tells the connection table when the connection goes from idle to busy or back, which
    /// decides whether it may be closed to admit another.
    private func reportIdleChange() {
        guard !isClosed else { return }
        let idle = isIdle
        guard idle != reportedIdle else { return }
        reportedIdle = idle
        loop.connectionIdleChanged(id, idle: idle)
    }

    private func resumeWriterIfRoom() {
        guard var stream, let waiter = stream.waiter,
            pendingOutputBytes <= Int64(loop.context.configuration.streamHighWaterMark)
        else { return }
        stream.waiter = nil
        self.stream = stream
        waiter.resume()
    }

    /// Closes the socket and forgets everything queued; a waiting stream writer fails.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        machine.closed()
        systemClose(socket)
        output.removeAll()
        outputStart = 0
        pendingOutputBytes = 0
        if let waiter = stream?.waiter {
            stream = nil
            waiter.resume(throwing: HTTPServerError.connectionClosed)
        }
        stream = nil
        work?.cancel()
        work = nil
        loop.connectionClosed(id)
    }
}

private func systemClose(_ descriptor: Int32) {
    _ = close(descriptor)
}

private func shutdownWriting(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    return shutdown(descriptor, Int32(SHUT_WR))
    #else
    return shutdown(descriptor, SHUT_WR)
    #endif
}
