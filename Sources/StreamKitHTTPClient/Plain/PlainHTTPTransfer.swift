#if canImport(Glibc)
import StreamKitHTTP
import CStreamKitLinux
import StreamKitCore
import Foundation
import Glibc
import Synchronization

/// One request over the client's own connection (``PlainHTTPBackend``), run by a thread of its
/// own: connect (or reuse), send the head, read the response head line by line into the same
/// ``HTTPClientTransferStateMachine`` libcurl's transfers use, then the body into the same
/// ``ResponseBodyChannel``: by `recv` into chunks for a reader, or, once the reader handed over a
/// file, by `splice` from the socket through a pipe into the file.
///
/// The body is held after the head until the reader says how it reads it
/// (``ResponseBodyChannel/holdUntilAsked()``), so a download to a file splices from the first
/// byte the head left over.
///
/// What to do with the response is decided by ``PlainHTTPResponsePlan``; the thread carries it
/// out.
///
/// `@unchecked Sendable`: the state machine, the connection, the pipe and the head continuation
/// are touched only by the transfer's thread once ``start(headContinuation:)`` ran (and by the
/// creating task before); other threads only set `control` (locked) and write the wake-up
/// `eventfd`.
final class PlainHTTPTransfer: @unchecked Sendable {
    private struct Control {
        var cancellation: HTTPClientError?
    }

    /// Why an exchange did not reach a response this transfer carries.
    private enum Detour: Error {
        /// A reused connection the server had closed: try a fresh one (nothing was received).
        case staleConnection
        /// A response for libcurl to fetch again (a redirect, a body framing or coding this
        /// transfer does not read).
        case handToLibcurl
    }

    let id: Int
    private let request: HTTPClientRequest
    private let target: PlainHTTPTarget
    private let backend: PlainHTTPBackend
    let channel: ResponseBodyChannel
    private let timeouts: HTTPClientTimeouts
    private let totalDeadline: ContinuousClock.Instant?
    private let receiveSize: Int
    private let control = Mutex(Control())
    /// Written by other threads to wake the transfer's `poll` (resume, cancel).
    private let wake: Int32

    // The transfer's thread only.
    private var machine: HTTPClientTransferStateMachine
    private var headContinuation: CheckedContinuation<HTTPClientResponse?, any Error>?
    private var connection: Int32 = -1
    private var pipe: (read: Int32, write: Int32, capacity: Int)?
    private var spliceRefused = false
    private var splicedTotal = 0
    private var buffer: UnsafeMutableRawBufferPointer

    /// A transfer, or `nil` when no descriptor is left for its wake-up.
    init?(
        id: Int, request: HTTPClientRequest, target: PlainHTTPTarget, configuration: HTTPClientConfiguration,
        bodyBufferLimit: Int, backend: PlainHTTPBackend
    ) {
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else { return nil }
        self.id = id
        self.request = request
        self.target = target
        self.backend = backend
        let timeouts = request.timeouts ?? configuration.timeouts
        self.timeouts = timeouts
        totalDeadline = timeouts.total.map { .now + $0 }
        receiveSize = min(max(configuration.receiveBufferSize, 16 << 10), 512 << 10)
        channel = ResponseBodyChannel(
            highWater: bodyBufferLimit, transferID: id, controller: backend, supportsDirectWrite: true)
        machine = HTTPClientTransferStateMachine(
            expectation: .init(
                url: request.url, range: request.range, ifRange: request.ifRange, expectsBody: true,
                idleTimeout: timeouts.idle),
            now: .now)
        buffer = .allocate(byteCount: receiveSize, alignment: 64)
        backend.transferObjectCreated()
    }

    deinit {
        buffer.deallocate()
        close(wake)
        backend.transferObjectDestroyed()
    }

    /// Starts the transfer's thread; `headContinuation` gets the response at its head, `nil`
    /// when libcurl is to fetch it again, or the failure.
    func start(headContinuation: CheckedContinuation<HTTPClientResponse?, any Error>) {
        self.headContinuation = headContinuation
        let thread = Thread { [self] in run() }
        thread.name = "sk-http-plain"
        thread.start()
    }

    /// The reader took a full buffer or asked for the body: wake the thread.
    func resume() { signal() }

    /// Stops the transfer with `error` (the reader's body ends with it).
    func cancel(_ error: HTTPClientError) {
        control.withLock { control in
            if control.cancellation == nil { control.cancellation = error }
        }
        signal()
    }

    private func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    // MARK: The transfer's thread

    private func run() {
        var reusable = false
        var outcome: HTTPClientTransferStateMachine.EndAction?
        do {
            let start = try exchange()
            reusable = try readBody(startingWith: start.leftover, length: start.length) && start.afterwards == .keep
            outcome = machine.completed(failure: nil, url: { self.request.url })
        } catch Detour.handToLibcurl {
            backend.handsToLibcurl(target.origin)
            outcome = nil
        } catch {
            let failure = error as? HTTPClientError ?? HTTPClientError(.transportFailure, detail: "\(error)")
            switch failure.kind {
            case .cancelled, .idleTimeout, .totalTimeout:
                outcome = machine.cancel(failure.with(url: request.url))
            default:
                outcome = machine.completed(failure: failure.with(url: request.url), url: { self.request.url })
            }
        }
        // Everything this transfer holds goes back before its reader hears of the end, as over
        // libcurl: the next request finds the kept connection, and the counters are final.
        if let pipe {
            close(pipe.read)
            close(pipe.write)
        }
        channel.releaseDirectWrite()
        var kept: Int32?
        if connection >= 0 {
            if reusable { kept = connection } else { close(connection) }
            connection = -1
        }
        backend.release(target.origin, connection: kept)
        backend.transferEnded(id, splicedBytes: splicedTotal, handedToLibcurl: outcome == nil)
        if let outcome {
            end(outcome)
        } else {
            headContinuation.take()?.resume(returning: nil)
            channel.finish(.cancelled)
        }
    }

    private func end(_ action: HTTPClientTransferStateMachine.EndAction) {
        switch action {
        case .none:
            break
        case .failHead(let error):
            headContinuation.take()?.resume(throwing: error)
            channel.finish(error)
        case .deliverHeadAndFinish(let head, let bodyError):
            deliverHead(head)
            channel.finish(bodyError)
        case .finishBody(let error):
            channel.finish(error)
        }
    }

    private func deliverHead(_ head: HTTPClientResponseHead) {
        guard let continuation = headContinuation.take() else { return }
        let body = HTTPClientResponse.Body(reader: BodyReader(channel: channel))
        continuation.resume(returning: HTTPClientResponse(head: head, body: body))
    }

    // MARK: Request and head

    /// Sends the request and reads the response head, on a reused connection or a fresh one.
    /// - Returns: The body bytes that came with the head, and how the rest is read.
    private func exchange() throws -> BodyStart {
        while true {
            let reused: Bool
            if let idle = backend.idleConnection(to: target.origin) {
                connection = idle
                reused = true
            } else {
                connection = try connect()
                reused = false
                backend.connectionOpened()
            }
            do {
                try send(target.head, reused: reused)
                return try readHead(reused: reused)
            } catch Detour.staleConnection {
                close(connection)
                connection = -1
            }
        }
    }

    private func connect() throws -> Int32 {
        let origin = target.origin
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(origin.host, String(origin.port), &hints, &list)
        guard status == 0, let list else {
            throw HTTPClientError(
                .couldNotResolveHost, url: request.url,
                detail: "could not resolve host \(origin.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let deadline = earliest(.now + timeouts.connect, totalDeadline) ?? .now + timeouts.connect
        var failure = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            // An address that does not answer within a second gives way to the next one (an
            // IPv6 route that drops packets, say); the last one has what is left.
            let attemptDeadline = entry == nil ? deadline : min(deadline, .now + .seconds(1))
            let socket = Glibc.socket(
                address.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else {
                failure = errno
                continue
            }
            if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                let outcome: WaitResult
                do {
                    outcome = try wait(for: socket, events: Int16(POLLOUT), until: attemptDeadline)
                } catch let error as HTTPClientError where error.kind == .totalTimeout {
                    // Not connected yet: a connect timeout, as libcurl reports it.
                    close(socket)
                    throw connectTimeout()
                } catch {
                    close(socket)
                    throw error
                }
                switch outcome {
                case .ready:
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        var one: Int32 = 1
                        let size = socklen_t(MemoryLayout<Int32>.size)
                        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, size)
                        setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &one, size)  // as libcurl's
                        return socket
                    }
                    failure = error
                case .timedOut:
                    close(socket)
                    if entry != nil, ContinuousClock.now < deadline {
                        failure = ETIMEDOUT
                        continue
                    }
                    throw connectTimeout()
                case .woken:
                    break  // not returned while a socket is waited for
                }
            } else {
                failure = errno
            }
            close(socket)
        }
        throw HTTPClientError(
            .connectFailed, url: request.url,
            detail: "failed to connect to \(origin.host) port \(origin.port): \(String(cString: strerror(failure)))")
    }

    private func connectTimeout() -> HTTPClientError {
        HTTPClientError(
            .connectTimeout, url: request.url,
            detail: "connection to \(target.origin.host) port \(target.origin.port) timed out after \(timeouts.connect)"
        )
    }

    private func send(_ bytes: [UInt8], reused: Bool) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes {
                Glibc.send(connection, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result >= 0 {
                sent += result
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try wait(for: connection, events: Int16(POLLOUT), until: bodyDeadline())
            case EPIPE, ECONNRESET:
                if reused && sent == 0 { throw Detour.staleConnection }
                throw systemFailure(.connectionReset, "send")
            default:
                throw systemFailure(.connectionReset, "send")
            }
        }
    }

    /// The body bytes that came with the final head, and how the rest of the body is read.
    private struct BodyStart {
        var leftover: [UInt8]
        var length: PlainHTTPResponsePlan.BodyLength
        var afterwards: PlainHTTPResponsePlan.ConnectionAfterBody
    }

    static let headReadSize = 4096

    /// Reads head lines into the state machine until it delivers the final head.
    /// - Returns: The body bytes received with the head, and how the rest is read.
    private func readHead(reused: Bool) throws -> BodyStart {
        var pending: [UInt8] = []
        pending.reserveCapacity(Self.headReadSize)
        var receivedAny = false
        while true {
            // A head is read a few KiB at a time, so that little of the body comes with it (those
            // bytes are copied; the rest of the body is spliced).
            let count = try receive(upTo: Self.headReadSize, reused: reused && !receivedAny)
            guard count > 0 else {
                if !receivedAny {
                    if reused { throw Detour.staleConnection }
                    throw HTTPClientError(.emptyResponse, url: request.url, detail: "the server sent nothing")
                }
                throw HTTPClientError(
                    .malformedResponse, url: request.url, detail: "the connection closed within the response head")
            }
            receivedAny = true
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            var start = 0
            while let newline = pending[start...].firstIndex(of: 10) {
                let line = pending[start...newline]
                start = newline + 1
                let now = ContinuousClock.now
                switch machine.headerLine(line, now: now, url: { self.request.url }) {
                case .deliverHead(let head):
                    return try begin(head, leftover: Array(pending[start...]))
                case .abort(let error):
                    throw error
                case .none:
                    guard line.count <= 2, case .awaitingHead(let parser) = machine.state,
                        let last = parser.lastHead, last.status.isRedirection
                    else { continue }
                    // A redirect libcurl follows goes there; one it would not follow is the final
                    // response, as libcurl delivers it.
                    if PlainHTTPResponsePlan(
                        redirect: last, request: request, defaultRedirectLimit: backend.configuration.redirectLimit)
                        != nil
                    {
                        throw Detour.handToLibcurl
                    }
                    switch machine.bodyWillArrive(now: now, url: { self.request.url }) {
                    case .deliverHeadThenAccept(let head):
                        return try begin(head, leftover: Array(pending[start...]))
                    case .abort(let error):
                        throw error
                    case .accept:
                        continue
                    }
                }
            }
            pending.removeFirst(start)
            if pending.count > 100 << 10 {
                throw HTTPClientError(
                    .headerTooLarge, url: request.url, detail: "a response head line over 100 KB")
            }
        }
    }

    /// Plans `head`'s body (a response for libcurl leaves by ``Detour/handToLibcurl``), buffers
    /// `leftover`, holds the body until the reader asks, and hands the head over.
    private func begin(_ head: HTTPClientResponseHead, leftover: [UInt8]) throws -> BodyStart {
        let plan = PlainHTTPResponsePlan(head: head, request: request, bytesWithHead: leftover.count)
        guard case .read(let length, let afterwards) = plan else { throw Detour.handToLibcurl }
        let kept: ArraySlice<UInt8>
        switch length {
        case .bytes(let count): kept = leftover.prefix(Int(clamping: count))
        case .untilClose: kept = leftover[...]
        }
        if !kept.isEmpty {
            _ = kept.withUnsafeBytes { channel.receive($0) }
            machine.bodyAccepted(kept.count, now: .now)
        }
        channel.holdUntilAsked()
        deliverHead(head)
        return BodyStart(leftover: leftover, length: length, afterwards: afterwards)
    }

    // MARK: Body

    /// Reads the body to where `length` says it ends, after the `leftover` that came with the head.
    /// - Returns: Whether it was read to its end (false when no head was delivered).
    private func readBody(
        startingWith leftover: [UInt8], length planned: PlainHTTPResponsePlan.BodyLength
    ) throws
        -> Bool
    {
        guard case .streaming = machine.state else { return false }
        let length: Int64? =
            switch planned {
            case .bytes(let count): count
            case .untilClose: nil
            }
        var received = Int64(leftover.count)
        var held: [UInt8]?
        // Bytes the channel refused while full are held, and offered again once it has room.
        while held != nil || length.map({ received < $0 }) ?? true {
            // A socket that never runs dry never makes `wait` look: cancellation and the total
            // deadline are checked at every step too.
            try checkStop()
            try waitWhilePaused()
            if let bytes = held {
                held = nil
                if try offer(bytes) == false { held = bytes }
                continue
            }
            let want = length.map { Int(clamping: $0 - received) } ?? Int.max
            if !spliceRefused, let sink = channel.directWriteTarget {
                let moved = try splice(upTo: want, into: sink)
                if moved < 0 { continue }  // refused: read again by `recv`
                guard moved > 0 else { return try bodyEnded(length: length) }
                received += Int64(moved)
                channel.movedDirectly(moved)
                machine.bodyAccepted(moved, now: .now)
                channel.flush(now: .now)
                continue
            }
            let count = try receive(upTo: want, reused: false)
            guard count > 0 else { return try bodyEnded(length: length) }
            received += Int64(count)
            let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if try offer(bytes) == false { held = bytes }
        }
        return true
    }

    /// The server closed the connection: the end of a body without a length, else a truncation.
    /// - Returns: true: the body was read to its end.
    private func bodyEnded(length: Int64?) throws -> Bool {
        guard length == nil else {
            throw HTTPClientError(.truncatedBody, url: request.url, detail: "the server closed the connection")
        }
        return true
    }

    /// Hands `bytes` to the channel. - Returns: false when the channel paused (hold them).
    private func offer(_ bytes: [UInt8]) throws -> Bool {
        switch bytes.withUnsafeBytes({ channel.receive($0) }) {
        case .accepted:
            break
        case .writeDirectly(let descriptor, let offset):
            try FileOutput.write(bytes, to: descriptor, at: offset)
            channel.wroteDirectly(bytes.count)
        case .pause:
            backend.bodyPaused()
            return false
        case .abort:
            throw HTTPClientError.cancelled
        }
        machine.bodyAccepted(bytes.count, now: .now)
        channel.flush(now: .now)
        return true
    }

    /// Waits while the channel holds the producer (a full buffer, or no read yet).
    private func waitWhilePaused() throws {
        guard channel.isProducerPaused else { return }
        machine.paused(now: .now)
        while channel.isProducerPaused {
            if case .timedOut = try wait(for: nil, events: 0, until: totalDeadline) {
                throw totalTimeout()
            }
        }
        machine.resumed(now: .now)
    }

    /// Moves up to `limit` bytes from the socket into the file through the pipe.
    /// - Returns: The bytes moved; 0 at the end of the stream; -1 when splicing is refused here
    ///   (the transfer reads by `recv` from then on).
    private func splice(upTo limit: Int, into sink: (descriptor: Int32, offset: Int64)) throws -> Int {
        guard let pipe = try openPipe() else {
            spliceRefused = true
            return -1
        }
        var moved = 0
        while true {
            moved = CStreamKitLinux.splice(
                connection, nil, pipe.write, nil, min(limit, pipe.capacity),
                SK_SPLICE_F_MOVE | SK_SPLICE_F_MORE | SK_SPLICE_F_NONBLOCK)
            if moved >= 0 { break }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try wait(for: connection, events: Int16(POLLIN), until: bodyDeadline())
            case EINVAL, ENOSYS:
                spliceRefused = true
                return -1
            default:
                throw systemFailure(.connectionReset, "splice")
            }
        }
        guard moved > 0 else { return 0 }
        var offset = Int(sink.offset)  // __off64_t
        var left = moved
        while left > 0 {
            let written = CStreamKitLinux.splice(pipe.read, nil, sink.descriptor, &offset, left, SK_SPLICE_F_MOVE)
            if written > 0 {
                left -= written
                continue
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && (errno == EINVAL || errno == ENOSYS) {
                // The file system takes no splice: copy what the pipe holds, and `recv` from now on.
                spliceRefused = true
                try drainPipe(pipe.read, count: left, into: sink.descriptor, at: Int64(offset))
                return moved
            }
            let failure = SystemError.current("splice", subject: "descriptor \(sink.descriptor)")
            throw HTTPClientError(
                .fileWriteFailed, url: request.url, byteOffset: Int64(offset), detail: "\(failure)")
        }
        splicedTotal += moved
        return moved
    }

    private func drainPipe(_ source: Int32, count: Int, into descriptor: Int32, at offset: Int64) throws {
        var left = count
        var offset = offset
        while left > 0 {
            let got = read(source, buffer.baseAddress!, min(left, buffer.count))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw systemFailure(.transportFailure, "read from pipe") }
            try FileOutput.write(UnsafeRawBufferPointer(rebasing: buffer[0..<got]), to: descriptor, at: offset)
            left -= got
            offset += Int64(got)
        }
    }

    private func openPipe() throws -> (read: Int32, write: Int32, capacity: Int)? {
        if let pipe { return pipe }
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
        // A bigger pipe moves more per call; the default (64 KiB) is kept where that is refused.
        _ = fcntl(ends[1], SK_F_SETPIPE_SZ, Int32(1 << 20))
        let capacity = Int(fcntl(ends[1], SK_F_GETPIPE_SZ))
        let opened = (read: ends[0], write: ends[1], capacity: capacity > 0 ? capacity : 64 << 10)
        pipe = opened
        return opened
    }

    // MARK: Waiting

    private enum WaitResult {
        case ready
        case woken
        case timedOut
    }

    /// Receives into `buffer`, waiting for bytes. - Returns: The count; 0 at the end of the stream.
    private func receive(upTo limit: Int = .max, reused: Bool) throws -> Int {
        while true {
            let count = recv(connection, buffer.baseAddress!, min(limit, buffer.count), 0)
            if count >= 0 { return count }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try wait(for: connection, events: Int16(POLLIN), until: bodyDeadline())
            case ECONNRESET where reused:
                throw Detour.staleConnection
            default:
                throw systemFailure(.connectionReset, "recv")
            }
        }
    }

    /// Waits for `events` on `socket` (or only for a wake-up when `nil`) until `deadline`, and
    /// throws the cancellation when one was asked for. An idle or total deadline that passes is
    /// thrown as its timeout; `.timedOut` is returned for a connect deadline.
    private func wait(
        for socket: Int32?, events: Int16, until deadline: ContinuousClock.Instant?
    ) throws
        -> WaitResult
    {
        var entries = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        if let socket { entries.append(pollfd(fd: socket, events: events, revents: 0)) }
        while true {
            try checkCancellation()
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return try timedOut(deadline) }
                timeout = Int32(clamping: left.wholeMilliseconds)
            }
            let result = poll(&entries, nfds_t(entries.count), timeout)
            if result < 0 && errno == EINTR { continue }
            try checkCancellation()
            if entries[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, 8)
                if socket == nil { return .woken }
            }
            if socket != nil, entries[1].revents != 0 { return .ready }
            if result == 0, let deadline { return try timedOut(deadline) }
        }
    }

    /// Throws the cancellation asked for, if one was.
    private func checkCancellation() throws {
        if let cancellation = control.withLock({ $0.cancellation }) { throw cancellation }
    }

    /// Throws the cancellation asked for, or the total timeout once it passed.
    private func checkStop() throws {
        try checkCancellation()
        if let totalDeadline, ContinuousClock.now >= totalDeadline { throw totalTimeout() }
    }

    /// The deadline the body (or head) waits against: the idle one, or the total one.
    private func bodyDeadline() -> ContinuousClock.Instant? {
        earliest(machine.idleDeadline, totalDeadline)
    }

    private func timedOut(_ deadline: ContinuousClock.Instant) throws -> WaitResult {
        if let totalDeadline, deadline >= totalDeadline { throw totalTimeout() }
        if let error = machine.idleTimeoutError(now: .now) { throw error }
        return .timedOut
    }

    private func totalTimeout() -> HTTPClientError {
        HTTPClientError(
            .totalTimeout, url: request.url,
            detail: "the transfer took longer than \(timeouts.total.map { "\($0)" } ?? "its limit")")
    }

    private func systemFailure(_ kind: HTTPClientError.Kind, _ call: String) -> HTTPClientError {
        HTTPClientError(kind, url: request.url, detail: "\(call): \(String(cString: strerror(errno)))")
    }

    private func earliest(
        _ first: ContinuousClock.Instant?, _ second: ContinuousClock.Instant?
    ) -> ContinuousClock.Instant? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }
}
#endif
