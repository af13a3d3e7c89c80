import StreamKitCore

#if canImport(Glibc)
import CStreamKitLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX socket calls the server makes, with the Linux and Darwin differences in one place.
enum ServerSocket {
    /// An IP address to listen on.
    struct Address: Hashable, Sendable {
        enum Family: Hashable, Sendable {
            case ipv4
            case ipv6
        }

        /// The address as text, without brackets: `127.0.0.1`, `::1`.
        let text: String
        let family: Family

        /// Parses an IPv4 or IPv6 literal (brackets allowed) or `localhost` (127.0.0.1).
        init?(_ host: String) {
            var text = host
            if text.lowercased() == "localhost" { text = "127.0.0.1" }
            if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
            if ServerSocket.parseIPv4(text) != nil {
                family = .ipv4
            } else if ServerSocket.parseIPv6(text) != nil {
                family = .ipv6
            } else {
                return nil
            }
            self.text = text
        }

        /// Whether only this machine can reach the address (127.0.0.0/8 or ::1).
        var isLoopback: Bool {
            switch family {
            case .ipv4: text.hasPrefix("127.")
            case .ipv6: ServerSocket.parseIPv6(text) == ServerSocket.parseIPv6("::1")
            }
        }

        /// Whether the address is the wildcard (`0.0.0.0` or `::`): every interface.
        var isWildcard: Bool {
            switch family {
            case .ipv4: ServerSocket.parseIPv4(text) == 0
            case .ipv6: ServerSocket.parseIPv6(text) == ServerSocket.parseIPv6("::")
            }
        }

        /// The host as written in a URL: IPv6 in brackets.
        var urlHost: String { family == .ipv6 ? "[\(text)]" : text }
    }

    /// Opens a non-blocking listening socket on `address`:`port` (0 picks a free port).
    ///
    /// - Returns: The descriptor and the port bound.
    static func listen(on address: Address, port: UInt16, backlog: Int32) throws -> (Int32, UInt16) {
        let family = address.family == .ipv4 ? AF_INET : AF_INET6
        #if canImport(Glibc)
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(family, SOCK_STREAM, 0)
        #endif
        let subject = "\(address.urlHost):\(port)"
        guard descriptor >= 0 else { throw SystemError.current("socket", subject: subject) }
        do {
            var yes: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var storage = sockaddr_storage()
            let length = fill(&storage, address: address, port: port)
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            guard bound == 0 else { throw SystemError.current("bind", subject: subject) }
            guard systemListen(descriptor, backlog) == 0 else {
                throw SystemError.current("listen", subject: subject)
            }
            try setNonBlocking(descriptor)
            var actual = sockaddr_storage()
            var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
            }
            return (descriptor, boundPort(of: actual))
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// A connection accepted: its descriptor, the peer as `ip:port`, and the peer's client key
    /// (``clientKey(_:)``).
    struct Accepted {
        let socket: Int32
        let remoteAddress: String
        let client: String
    }

    /// Accepts one pending connection, non-blocking and close-on-exec.
    ///
    /// - Returns: The connection, or `nil` with `errno` set (`EAGAIN` when none is pending).
    static func accept(_ listener: Int32) -> Accepted? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                #if canImport(Glibc)
                return accept4(
                    listener, pointer, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                #else
                return Darwin.accept(listener, pointer, &length)
                #endif
            }
        }
        guard descriptor >= 0 else { return nil }
        #if canImport(Darwin)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        _ = try? setNonBlocking(descriptor)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return Accepted(socket: descriptor, remoteAddress: describe(storage), client: clientKey(storage))
    }

    /// The peer as one client for per-client limits: an IPv4 address (IPv4-mapped IPv6 too), or
    /// an IPv6 address's /64, the block one host is usually given and can pick addresses from.
    static func clientKey(_ storage: sockaddr_storage) -> String {
        var storage = storage
        guard Int32(storage.ss_family) == AF_INET6 else {
            let text = describe(storage)
            return String(text[..<(text.lastIndex(of: ":") ?? text.endIndex)])
        }
        let bytes = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                withUnsafeBytes(of: address.pointee.sin6_addr) { Array($0) }
            }
        }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }

    /// Sends bytes without raising SIGPIPE; `more` tells the kernel further data follows at once
    /// (a file body after its head), so both leave in full segments.
    ///
    /// - Returns: Bytes sent, or -1 with `errno` set.
    static func send(_ socket: Int32, _ bytes: UnsafeRawBufferPointer, more: Bool) -> Int {
        #if canImport(Glibc)
        return Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0))
        #else
        return Darwin.send(socket, bytes.baseAddress, bytes.count, 0)
        #endif
    }

    /// The most bytes one `sendfile` call is asked for. A call holds the socket while it runs,
    /// so the acknowledgements that open the window wait behind it: measured on loopback with a
    /// 1 GiB file, calls of up to 1 GiB (each sent about 40 MB) gave 0.76–0.88 times nginx's
    /// throughput, calls of 256 KiB 1.00–1.17 times (nginx's `sendfile_max_chunk` does the same).
    static let sendFileChunk: Int64 = 256 << 10

    /// Sends up to `count` bytes of `file` from `offset` with `sendfile`, at most ``sendFileChunk``.
    ///
    /// - Returns: Bytes sent (0 means the file ended early), or -1 with `errno` set.
    static func sendFile(_ socket: Int32, file: Int32, offset: Int64, count: Int64) -> Int {
        #if canImport(Glibc)
        var position = off_t(offset)
        return Glibc.sendfile(socket, file, &position, Int(min(count, sendFileChunk)))
        #else
        var length = off_t(min(count, sendFileChunk))
        let result = Darwin.sendfile(file, socket, off_t(offset), &length, nil, 0)
        // Darwin reports a partial send through `length` even when it fails with EAGAIN.
        if result == -1 && length > 0 && (errno == EAGAIN || errno == EINTR) { return Int(length) }
        return result == 0 ? Int(length) : -1
        #endif
    }

    /// `ip:port`, IPv6 in brackets.
    static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count))
                    return text(buffer) + ":\(UInt16(bigEndian: address.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
                    return "[" + text(buffer) + "]:\(UInt16(bigEndian: address.pointee.sin6_port))"
                }
            }
        default:
            return "unknown"
        }
    }

    /// The IPv4 address as a number, or `nil` when `text` is not a dotted quad.
    static func parseIPv4(_ text: String) -> UInt32? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return UInt32(bigEndian: address.s_addr)
    }

    /// The IPv6 address's 16 bytes, or `nil` when `text` is not an IPv6 literal.
    static func parseIPv6(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func setNonBlocking(_ descriptor: Int32) throws {
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SystemError.current("fcntl", subject: "O_NONBLOCK")
        }
    }

    private static func fill(_ storage: inout sockaddr_storage, address: Address, port: UInt16) -> socklen_t {
        switch address.family {
        case .ipv4:
            return withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    pointer.pointee.sin_family = sa_family_t(AF_INET)
                    pointer.pointee.sin_port = port.bigEndian
                    inet_pton(AF_INET, address.text, &pointer.pointee.sin_addr)
                    return socklen_t(MemoryLayout<sockaddr_in>.size)
                }
            }
        case .ipv6:
            return withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    pointer.pointee.sin6_family = sa_family_t(AF_INET6)
                    pointer.pointee.sin6_port = port.bigEndian
                    inet_pton(AF_INET6, address.text, &pointer.pointee.sin6_addr)
                    return socklen_t(MemoryLayout<sockaddr_in6>.size)
                }
            }
        }
    }

    private static func boundPort(of storage: sockaddr_storage) -> UInt16 {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default:
            return 0
        }
    }
}

/// `listen(2)`, named apart from ``ServerSocket/listen(on:port:backlog:)``.
private func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
    listen(descriptor, backlog)
}
