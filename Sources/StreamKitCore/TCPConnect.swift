#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One address `getaddrinfo` gave for a host and port, copied out of its list.
public struct ResolvedAddress: Hashable, Sendable {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    /// The `sockaddr` bytes.
    public let bytes: [UInt8]

    public init(family: Int32, bytes: [UInt8]) {
        self.family = family
        self.bytes = bytes
    }

    /// Resolves `host` (a name or an IP literal) and `port` to stream-socket addresses, in the
    /// order the resolver prefers. Blocks while the resolver works.
    ///
    /// - Throws: The resolver's message (`gai_strerror`) when it finds nothing.
    public static func resolve(host: String, port: UInt16) throws(ResolveError) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw ResolveError(host: host, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var addresses: [ResolvedAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            if let socketAddress = address.pointee.ai_addr {
                let bytes = Array(UnsafeRawBufferPointer(start: socketAddress, count: Int(address.pointee.ai_addrlen)))
                addresses.append(ResolvedAddress(family: address.pointee.ai_family, bytes: bytes))
            }
            entry = address.pointee.ai_next
        }
        return addresses
    }

    /// Opens a non-blocking, close-on-exec stream socket for this address and starts connecting.
    ///
    /// - Returns: The descriptor, and whether it connected at once (otherwise it is in progress:
    ///   wait until it is writable, then read ``pendingError(of:)``).
    /// - Throws: ``SystemError`` of `socket` or `connect`; no descriptor is left open.
    public func startConnecting() throws(SystemError) -> (descriptor: Int32, connected: Bool) {
        #if canImport(Darwin)
        let descriptor = socket(family, SOCK_STREAM, 0)
        #else
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw .current("socket") }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let result = bytes.withUnsafeBytes {
            connect(descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
        if result == 0 { return (descriptor, true) }
        let code = errno
        guard code == EINPROGRESS else {
            close(descriptor)
            throw SystemError(code: code, operation: "connect")
        }
        return (descriptor, false)
    }

    /// The error a connection in progress ended with (`SO_ERROR`), once its socket is writable:
    /// 0 when it connected.
    public static func pendingError(of descriptor: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return errno }
        return error
    }
}

/// The resolver found no address for a host.
public struct ResolveError: Error, Hashable, Sendable {
    /// The host asked for.
    public let host: String
    /// The resolver's text, such as "Name or service not known".
    public let message: String
}

/// The order and deadlines of connecting to a host's addresses, one after another, within one
/// connect deadline: each address but the last gets at most `perAddress` (so that an address
/// that drops packets, such as an IPv6 route that goes nowhere, gives way to the next), the last
/// one what is left. A pure value: the transports carry the attempts out their own way.
public struct ConnectAttempts: Sendable {
    /// One attempt: the address and when to give up on it.
    public struct Attempt: Sendable {
        public let address: ResolvedAddress
        public let deadline: ContinuousClock.Instant
        /// Whether another address follows, so that a timeout here moves on instead of failing.
        public let hasNext: Bool
    }

    private var remaining: ArraySlice<ResolvedAddress>
    /// The deadline of the whole connect.
    public let deadline: ContinuousClock.Instant
    private let perAddress: Duration?
    /// The `errno` of the last attempt that failed (`ECONNREFUSED` before any).
    public private(set) var lastError: Int32 = ECONNREFUSED

    /// - Parameters:
    ///   - addresses: The addresses to try, in order.
    ///   - deadline: When the whole connect times out.
    ///   - perAddress: The most each address but the last may take; `nil` gives each the whole deadline.
    public init(addresses: [ResolvedAddress], deadline: ContinuousClock.Instant, perAddress: Duration? = .seconds(1)) {
        remaining = addresses[...]
        self.deadline = deadline
        self.perAddress = perAddress
    }

    /// The next attempt, or `nil` when every address was tried.
    public mutating func next(now: ContinuousClock.Instant) -> Attempt? {
        guard let address = remaining.popFirst() else { return nil }
        let hasNext = !remaining.isEmpty
        let attemptDeadline = hasNext ? perAddress.map { min(deadline, now + $0) } ?? deadline : deadline
        return Attempt(address: address, deadline: attemptDeadline, hasNext: hasNext)
    }

    /// Records that an attempt failed with `code`.
    public mutating func failed(_ code: Int32) { lastError = code }

    /// Whether a timed-out attempt gives way to the next address rather than failing the connect.
    public func movesOnAfterTimeout(of attempt: Attempt, now: ContinuousClock.Instant) -> Bool {
        attempt.hasNext && now < deadline
    }
}
