import Dispatch
import StreamKitCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The TCP session under an RTMP connection: connect to a host (port 1935 by default), status
/// events, read, write, disconnect, with a connect timeout and an idle timeout; over TLS for
/// RTMPS (a ``TLSClientSession`` between the bytes read and written and the socket).
///
/// An actor owns one non-blocking POSIX socket. Waiting for it to become readable or writable
/// holds no thread: a Dispatch source wakes the waiting task. Status events mirror the stream
/// events of the original Objective-C session (opened, bytes available, space available, error,
/// end) and are delivered on ``events``; reading and writing do not depend on anyone listening.
public actor RTMPSocket {
    /// A change in the session's status.
    public enum Event: Hashable, Sendable {
        /// The TCP connection is open.
        case opened
        /// Bytes are available to read.
        case readable
        /// The socket accepts more bytes.
        case writable
        /// The connection failed.
        case error(RTMPError)
        /// The peer closed the connection.
        case ended
    }

    /// Timeouts and buffer size.
    public struct Configuration: Hashable, Sendable {
        /// How long a TCP connect may take.
        public var connectTimeout: Duration
        /// How long a read or write may wait with no progress; `nil` waits for ever.
        public var idleTimeout: Duration?
        /// The most bytes one ``read(maxLength:)`` returns by default (4 KB, as the original session read).
        public var readSize: Int
        /// After a read, wait at least this long before the next wake-up for data, so that bytes
        /// gather in the kernel and are read in fewer, larger reads: less CPU for a recorder that
        /// does not need each message the moment it arrives. `nil` reads data as soon as it comes.
        /// (Applies with the epoll reactor on Linux.)
        public var readCoalescing: Duration?

        public init(
            connectTimeout: Duration = .seconds(10), idleTimeout: Duration? = .seconds(30), readSize: Int = 4_096,
            readCoalescing: Duration? = nil
        ) {
            self.connectTimeout = connectTimeout
            self.idleTimeout = idleTimeout
            self.readSize = readSize
            self.readCoalescing = readCoalescing
        }
    }

    public let configuration: Configuration
    /// Status events, newest kept when nobody reads them.
    public nonisolated let events: AsyncStream<Event>
    let eventContinuation: AsyncStream<Event>.Continuation
    private let queue = DispatchQueue(label: "streamkit.rtmp.socket")
    var connection: Connection?
    var peer = ""
    private var hasEnded = false
    /// Reused for every read, so that a large read size costs no allocation per read.
    var scratch: [UInt8] = []
    /// The TLS session of an `rtmps://` connection.
    var tls: TLSClientSession?
    /// Ciphertext for the server that the socket has not taken yet.
    var ciphertext = ByteBuffer()

    /// Whether a connection is open, shared with the readiness callbacks.
    final class OpenFlag: Sendable {
        let value = Atomic(false)
    }

    /// One connected descriptor and what wakes its waiters: the process's epoll reactor on
    /// Linux, Dispatch sources elsewhere. The descriptor is closed once nothing watches it.
    final class Connection: Sendable {
        /// The two ways to wait for readiness.
        private enum Waker {
            #if os(Linux)
            case reactor(SocketReactor)
            #endif
            case dispatch(read: SocketReadiness, write: SocketReadiness)
        }

        let descriptor: Int32
        /// Readiness is reported as events only once the connection is open.
        let isOpen = OpenFlag()
        private let isClosed = OpenFlag()
        private let onReadable: @Sendable () -> Void
        private let onWritable: @Sendable () -> Void
        private let waker: Waker

        init(descriptor: Int32, queue: DispatchQueue, events: AsyncStream<Event>.Continuation) {
            self.descriptor = descriptor
            let isOpen = self.isOpen
            let onReadable: @Sendable () -> Void = {
                if isOpen.value.load(ordering: .acquiring) { events.yield(.readable) }
            }
            let onWritable: @Sendable () -> Void = {
                if isOpen.value.load(ordering: .acquiring) { events.yield(.writable) }
            }
            self.onReadable = onReadable
            self.onWritable = onWritable
            #if os(Linux)
            if let reactor = SocketReactor.shared {
                waker = .reactor(reactor)
                return
            }
            #endif
            let remaining = Atomic(2)
            let closeWhenReleased: @Sendable () -> Void = {
                if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { closeDescriptor(descriptor) }
            }
            waker = .dispatch(
                read: SocketReadiness(
                    descriptor: descriptor, direction: .read, queue: queue, onReady: onReadable,
                    onCancelled: closeWhenReleased),
                write: SocketReadiness(
                    descriptor: descriptor, direction: .write, queue: queue, onReady: onWritable,
                    onCancelled: closeWhenReleased))
        }

        /// Waits until the socket is ready for `direction`, `timeout` passes, or the task is
        /// cancelled; see ``SocketReactor`` for `coalescing`.
        func wait(
            _ direction: ReadinessDirection, timeout: Duration?, coalescing: Duration? = nil
        ) async -> ReadinessOutcome {
            switch waker {
            #if os(Linux)
            case .reactor(let reactor):
                await reactor.wait(
                    descriptor, direction, timeout: timeout, coalescing: coalescing,
                    onReady: direction == .read ? onReadable : onWritable)
            #endif
            case .dispatch(let read, let write):
                await (direction == .read ? read : write).wait(timeout: timeout)
            }
        }

        /// Reports the next arrival of data as a `readable` event, with nobody waiting.
        func watchReadable() {
            switch waker {
            #if os(Linux)
            case .reactor(let reactor): reactor.notify(descriptor, .read, onReady: onReadable)
            #endif
            case .dispatch(let read, _): read.arm()
            }
        }

        func close() {
            guard !isClosed.value.exchange(true, ordering: .acquiringAndReleasing) else { return }
            switch waker {
            #if os(Linux)
            case .reactor(let reactor):
                reactor.remove(descriptor)
                closeDescriptor(descriptor)
            #endif
            case .dispatch(let read, let write):
                read.cancel()
                write.cancel()
            }
        }
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        (events, eventContinuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit {
        connection?.close()
        eventContinuation.finish()
    }

    /// Whether a connection is open.
    public var isConnected: Bool { connection != nil }

    /// Opens a TCP connection to `host` and `port`, closing any open one first, and runs a TLS
    /// handshake on it (within the connect timeout) when `tls` is given.
    ///
    /// - Throws: ``RTMPError`` (connection failed, connect timed out; TLS handshake failed,
    ///   certificate verify failed, not supported where there is no TLS).
    public func connect(
        host: String, port: UInt16 = RTMPURL.defaultPort, tls tlsOptions: RTMPTLSOptions? = nil
    ) async throws(RTMPError) {
        disconnect()
        hasEnded = false
        peer = "\(host):\(port)"
        let addresses: [ResolvedAddress]
        do {
            addresses = try ResolvedAddress.resolve(host: host, port: port)
        } catch {
            throw .connectionFailed(host: host, port: port, error.message)
        }
        // RTMP gives every address the whole connect timeout: a timeout ends the connect.
        var attempts = ConnectAttempts(
            addresses: addresses, deadline: .now + configuration.connectTimeout, perAddress: nil)
        var lastError = "no address"
        while let attempt = attempts.next(now: .now) {
            let descriptor: Int32
            let connected: Bool
            do {
                (descriptor, connected) = try attempt.address.startConnecting()
            } catch {
                lastError = error.reason
                continue
            }
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let candidate = Connection(descriptor: descriptor, queue: queue, events: eventContinuation)
            if !connected {
                let remaining = attempt.deadline - ContinuousClock.now
                let outcome = await candidate.wait(.write, timeout: remaining > .zero ? remaining : .zero)
                if outcome != .ready {
                    candidate.close()
                    if outcome == .timedOut {
                        throw .connectTimedOut(host: host, port: port, after: configuration.connectTimeout)
                    }
                    throw .connectionFailed(host: host, port: port, "cancelled")
                }
                let status = ResolvedAddress.pendingError(of: descriptor)
                if status != 0 {
                    lastError = SystemError(code: status, operation: "connect").reason
                    candidate.close()
                    continue
                }
            }
            connection = candidate
            if let tlsOptions {
                do {
                    try await startTLS(host: host, port: port, options: tlsOptions)
                } catch {
                    disconnect()
                    throw error
                }
            }
            eventContinuation.yield(.opened)
            candidate.isOpen.value.store(true, ordering: .releasing)
            candidate.watchReadable()
            eventContinuation.yield(.writable)
            return
        }
        throw .connectionFailed(host: host, port: port, lastError)
    }

    /// Reads up to `maxLength` bytes (``Configuration/readSize`` by default), waiting for some to arrive.
    ///
    /// - Parameter timeout: How long to wait for data; the idle timeout when `nil`.
    /// - Returns: The bytes read; empty when the peer has closed the connection.
    /// - Throws: ``RTMPError``: idle timeout, connection lost, or invalid state when not connected.
    public func read(maxLength: Int? = nil, timeout: Duration? = nil) async throws(RTMPError) -> [UInt8] {
        var buffer = ByteBuffer()
        _ = try await read(appendingTo: &buffer, maxLength: maxLength, timeout: timeout)
        return Array(buffer.readableBytesView)
    }

    /// Reads up to `maxLength` bytes onto the end of `buffer`, waiting for some to arrive.
    ///
    /// - Returns: The number of bytes read; 0 when the peer has closed the connection.
    /// - Throws: As ``read(maxLength:timeout:)``.
    public func read(
        appendingTo buffer: inout ByteBuffer, maxLength: Int? = nil, timeout: Duration? = nil
    )
        async throws(RTMPError) -> Int
    {
        let limit = timeout ?? configuration.idleTimeout
        while true {
            if let count = try receive(appendingTo: &buffer, maxLength: maxLength, watchWhenDrained: false) {
                return count
            }
            guard let connection else { throw .invalidState("read on a closed RTMP socket") }
            if tls != nil, try !sendCiphertextNow() {
                // libssl answered the server while reading (a key update): that goes out first.
                switch try await flushCiphertext(timeout: limit) {
                case .ready: continue
                case .timedOut: throw .idleTimeout("\(peer) to accept data", after: limit ?? .zero)
                case .cancelled: throw .connectionClosed("the socket to \(peer) was closed while reading")
                }
            }
            switch await connection.wait(.read, timeout: limit, coalescing: configuration.readCoalescing) {
            case .ready: continue
            case .timedOut: throw .idleTimeout("data from \(peer)", after: limit ?? .zero)
            case .cancelled: throw .connectionClosed("the socket to \(peer) was closed while reading")
            }
        }
    }

    /// Reads whatever is available now, without waiting.
    ///
    /// - Returns: The bytes, `nil` when none are available yet, empty when the peer has closed the connection.
    public func readAvailable(maxLength: Int? = nil) throws(RTMPError) -> [UInt8]? {
        var buffer = ByteBuffer()
        guard try readAvailable(appendingTo: &buffer, maxLength: maxLength) != nil else { return nil }
        return Array(buffer.readableBytesView)
    }

    /// Reads whatever is available now onto the end of `buffer`, without waiting.
    ///
    /// - Returns: The number of bytes read, `nil` when none are available yet, 0 when the peer has closed the connection.
    public func readAvailable(appendingTo buffer: inout ByteBuffer, maxLength: Int? = nil) throws(RTMPError) -> Int? {
        try receive(appendingTo: &buffer, maxLength: maxLength, watchWhenDrained: true)
    }

    /// One `recv` (or TLS read); when the socket is drained and nobody is about to wait, the next
    /// arrival is reported as a `readable` event.
    private func receive(
        appendingTo buffer: inout ByteBuffer, maxLength: Int?, watchWhenDrained: Bool
    ) throws(RTMPError)
        -> Int?
    {
        guard let connection else {
            if hasEnded { return 0 }
            throw .invalidState("read on a closed RTMP socket")
        }
        let capacity = max(1, maxLength ?? configuration.readSize)
        if scratch.count < capacity { scratch = [UInt8](repeating: 0, count: capacity) }
        let received: Int?
        if let tls {
            received = try receive(tls, appendingTo: &buffer, capacity: capacity)
        } else {
            received = try receiveRaw(capacity: capacity)
            if let received, received > 0 { buffer.writeBytes(scratch[0..<received]) }
        }
        if received == nil && watchWhenDrained { connection.watchReadable() }
        if received == 0 {
            hasEnded = true
            eventContinuation.yield(.ended)
        }
        return received
    }

    /// One `recv` into ``scratch``: the count, 0 when the peer has closed, `nil` when nothing is there yet.
    func receiveRaw(capacity: Int) throws(RTMPError) -> Int? {
        guard let connection else { throw .invalidState("read on a closed RTMP socket") }
        if scratch.count < capacity { scratch = [UInt8](repeating: 0, count: capacity) }
        while true {
            let received = scratch.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, capacity, 0) }
            if received >= 0 { return received }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default:
                let error = RTMPError.connectionLost(SystemError.current("recv", subject: peer))
                eventContinuation.yield(.error(error))
                throw error
            }
        }
    }

    /// One `send`: the count sent, `nil` when the socket is full.
    func sendRaw(_ bytes: ArraySlice<UInt8>) throws(RTMPError) -> Int? {
        guard let connection else { throw .invalidState("write on a closed RTMP socket") }
        while true {
            let sent = bytes.withUnsafeBytes { raw in
                send(connection.descriptor, raw.baseAddress, raw.count, Self.sendFlags)
            }
            if sent >= 0 { return sent }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default:
                let error = RTMPError.connectionLost(SystemError.current("send", subject: peer))
                eventContinuation.yield(.error(error))
                throw error
            }
        }
    }

    /// Writes every byte, waiting for the socket to accept more when it is full.
    ///
    /// - Throws: ``RTMPError``: idle timeout when nothing could be written for that long, connection lost.
    public func write(_ bytes: ByteBuffer) async throws(RTMPError) {
        try await write(bytes.readableBytesView)
    }

    /// Writes every byte, waiting for the socket to accept more when it is full.
    ///
    /// - Throws: ``RTMPError``: idle timeout when nothing could be written for that long, connection lost.
    public func write(_ bytes: some Collection<UInt8> & Sendable) async throws(RTMPError) {
        let contiguous: ArraySlice<UInt8> =
            (bytes as? ArraySlice<UInt8>) ?? (bytes as? [UInt8])?[...] ?? ArraySlice(bytes)
        if let tls {
            try encrypt(contiguous, with: tls)
            try await writeCiphertext()
            return
        }
        var offset = contiguous.startIndex
        while offset < contiguous.endIndex {
            guard let connection else { throw .invalidState("write on a closed RTMP socket") }
            if let sent = try sendRaw(contiguous[offset...]) {
                offset += sent
                continue
            }
            switch await connection.wait(.write, timeout: configuration.idleTimeout) {
            case .ready: continue
            case .timedOut: throw .idleTimeout("\(peer) to accept data", after: configuration.idleTimeout ?? .zero)
            case .cancelled: throw .connectionClosed("the socket to \(peer) was closed while writing")
            }
        }
    }

    /// Sends FIN: no more bytes will be written, reading continues until the peer closes.
    public func shutdownOutput() {
        guard let connection else { return }
        if let tls {
            // close_notify, if the socket takes it now.
            tls.close()
            _ = try? sendCiphertextNow()
        }
        shutdown(connection.descriptor, Int32(SHUT_WR))
    }

    /// Closes the connection. Reading and writing afterwards fail with ``RTMPError/Kind/invalidState``.
    public func disconnect() {
        connection?.close()
        connection = nil
        tls = nil
        ciphertext = ByteBuffer()
    }

    /// Ends the event stream; call when the session is done for good.
    public func finishEvents() { eventContinuation.finish() }

    // MARK: Private

    #if canImport(Darwin)
    private static let sendFlags: Int32 = 0
    #else
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif
}

private func closeDescriptor(_ descriptor: Int32) { close(descriptor) }
