import Core
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The TCP session under an RTMP connection: connect to a host (port 1935 by default), status
/// events, read, write, disconnect, with a connect timeout and an idle timeout.
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

        public init(
            connectTimeout: Duration = .seconds(10), idleTimeout: Duration? = .seconds(30), readSize: Int = 4_096
        ) {
            self.connectTimeout = connectTimeout
            self.idleTimeout = idleTimeout
            self.readSize = readSize
        }
    }

    public let configuration: Configuration
    /// Status events, newest kept when nobody reads them.
    public nonisolated let events: AsyncStream<Event>
    private let eventContinuation: AsyncStream<Event>.Continuation
    private let queue = DispatchQueue(label: "streamkit.rtmp.socket")
    private var connection: Connection?
    private var peer = ""
    private var hasEnded = false

    /// Whether a connection is open, shared with the readiness callbacks.
    private final class OpenFlag: Sendable {
        let value = Atomic(false)
    }

    /// One connected descriptor and its readiness sources; the descriptor is closed once Dispatch has let go of it.
    private final class Connection: Sendable {
        let descriptor: Int32
        let readable: SocketReadiness
        let writable: SocketReadiness
        /// Readiness is reported as events only once the connection is open.
        let isOpen = OpenFlag()

        init(descriptor: Int32, queue: DispatchQueue, events: AsyncStream<Event>.Continuation) {
            self.descriptor = descriptor
            let remaining = Atomic(2)
            let isOpen = self.isOpen
            let closeWhenReleased: @Sendable () -> Void = {
                if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { closeDescriptor(descriptor) }
            }
            readable = SocketReadiness(
                descriptor: descriptor, direction: .read, queue: queue,
                onReady: { if isOpen.value.load(ordering: .acquiring) { events.yield(.readable) } },
                onCancelled: closeWhenReleased)
            writable = SocketReadiness(
                descriptor: descriptor, direction: .write, queue: queue,
                onReady: { if isOpen.value.load(ordering: .acquiring) { events.yield(.writable) } },
                onCancelled: closeWhenReleased)
        }

        func close() {
            readable.cancel()
            writable.cancel()
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

    /// Opens a TCP connection to `host` and `port`, closing any open one first.
    ///
    /// - Throws: ``RTMPError`` (connection failed, connect timed out).
    public func connect(host: String, port: UInt16 = RTMPURL.defaultPort) async throws(RTMPError) {
        disconnect()
        hasEnded = false
        peer = "\(host):\(port)"
        let deadline = ContinuousClock.now + configuration.connectTimeout
        var lastError = "no address"
        for address in try Self.resolve(host: host, port: port) {
            let descriptor = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else {
                lastError = SystemError.current("socket").reason
                continue
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let candidate = Connection(descriptor: descriptor, queue: queue, events: eventContinuation)
            let result = address.storage.withUnsafeBytes {
                connectDescriptor(descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
            }
            if result != 0 && errno != EINPROGRESS {
                lastError = SystemError.current("connect").reason
                candidate.close()
                continue
            }
            if result != 0 {
                let remaining = deadline - ContinuousClock.now
                let outcome = await candidate.writable.wait(timeout: remaining > .zero ? remaining : .zero)
                if outcome != .ready {
                    candidate.close()
                    if outcome == .timedOut {
                        throw .connectTimedOut(host: host, port: port, after: configuration.connectTimeout)
                    }
                    throw .connectionFailed(host: host, port: port, "cancelled")
                }
                var status: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &status, &length)
                if status != 0 {
                    lastError = SystemError(code: status, operation: "connect").reason
                    candidate.close()
                    continue
                }
            }
            connection = candidate
            eventContinuation.yield(.opened)
            candidate.isOpen.value.store(true, ordering: .releasing)
            candidate.readable.arm()
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
        let limit = timeout ?? configuration.idleTimeout
        while true {
            if let bytes = try readAvailable(maxLength: maxLength) { return bytes }
            guard let connection else { throw .invalidState("read on a closed RTMP socket") }
            switch await connection.readable.wait(timeout: limit) {
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
        guard let connection else {
            if hasEnded { return [] }
            throw .invalidState("read on a closed RTMP socket")
        }
        let capacity = max(1, maxLength ?? configuration.readSize)
        while true {
            var received = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                received = recv(connection.descriptor, buffer.baseAddress, capacity, 0)
                count = max(0, received)
            }
            if received > 0 {
                connection.readable.arm()
                return bytes
            }
            if received == 0 {
                hasEnded = true
                eventContinuation.yield(.ended)
                return []
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                connection.readable.arm()
                return nil
            default:
                let error = RTMPError.connectionLost(SystemError.current("recv", subject: peer))
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
        let contiguous: ArraySlice<UInt8> = (bytes as? ArraySlice<UInt8>) ?? ArraySlice(bytes)
        var offset = contiguous.startIndex
        while offset < contiguous.endIndex {
            guard let connection else { throw .invalidState("write on a closed RTMP socket") }
            let sent = contiguous[offset...].withUnsafeBytes { raw in
                send(connection.descriptor, raw.baseAddress, raw.count, Self.sendFlags)
            }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                switch await connection.writable.wait(timeout: configuration.idleTimeout) {
                case .ready: continue
                case .timedOut: throw .idleTimeout("\(peer) to accept data", after: configuration.idleTimeout ?? .zero)
                case .cancelled: throw .connectionClosed("the socket to \(peer) was closed while writing")
                }
            default:
                let error = RTMPError.connectionLost(SystemError.current("send", subject: peer))
                eventContinuation.yield(.error(error))
                throw error
            }
        }
    }

    /// Sends FIN: no more bytes will be written, reading continues until the peer closes.
    public func shutdownOutput() {
        guard let connection else { return }
        shutdown(connection.descriptor, Int32(SHUT_WR))
    }

    /// Closes the connection. Reading and writing afterwards fail with ``RTMPError/Kind/invalidState``.
    public func disconnect() {
        connection?.close()
        connection = nil
    }

    /// Ends the event stream; call when the session is done for good.
    public func finishEvents() { eventContinuation.finish() }

    // MARK: Private

    #if canImport(Darwin)
    private static let sendFlags: Int32 = 0
    #else
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif

    private struct ResolvedAddress {
        var family: Int32
        var storage: [UInt8]
        var length: socklen_t
    }

    private static func resolve(host: String, port: UInt16) throws(RTMPError) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .connectionFailed(host: host, port: port, String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var addresses: [ResolvedAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                let length = Int(entry.pointee.ai_addrlen)
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: length))
                addresses.append(
                    ResolvedAddress(family: entry.pointee.ai_family, storage: bytes, length: entry.pointee.ai_addrlen))
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

private func closeDescriptor(_ descriptor: Int32) { close(descriptor) }

private func connectDescriptor(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}
