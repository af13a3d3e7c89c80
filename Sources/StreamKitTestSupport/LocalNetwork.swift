import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loopback helpers: free ports for servers that cannot report the port they bound, and a
/// readiness check.
public enum LocalNetwork {
    /// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picked it for port 0).
    ///
    /// A server given this port may still lose a race for it; launchers retry on "address in use".
    public static func freePort() throws -> UInt16 {
        // Bound by a socket that never listens, and released when it goes.
        try refusingPort().port
    }

    /// A port on 127.0.0.1 that refuses connections for as long as the returned value lives: bound
    /// by a socket that never listens, so no other server (an nginx another test starts meanwhile)
    /// can take it, as it could a port from ``freePort()``.
    public static func refusingPort() throws -> RefusingPort {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(socketDescriptor)
            throw TestSupportError("bind: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        return RefusingPort(descriptor: socketDescriptor, port: UInt16(bigEndian: address.sin_port))
    }

    /// A TCP socket listening on 127.0.0.1 at a port the kernel picked, for servers of our own in tests.
    ///
    /// - Parameters:
    ///   - backlog: The listen backlog; `nil` binds the socket without listening (it then holds
    ///     the port, refusing connections, and another socket may bind the port beside it).
    ///   - port: The port, with `SO_REUSEADDR`; 0 lets the kernel pick one.
    /// - Returns: The socket (the caller closes it) and its port.
    public static func listeningSocket(backlog: Int32?, port: UInt16 = 0) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, backlog.map({ listen(descriptor, $0) == 0 }) ?? true else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TestSupportError("bind/listen: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    public static func isListening(port: UInt16) -> Bool {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { return false }
        defer { close(socketDescriptor) }
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return connected == 0
    }

    /// Waits until 127.0.0.1:`port` accepts connections, or `process` exits, or `timeout` passes.
    ///
    /// - Returns: Whether the port is accepting connections.
    public static func waitUntilListening(
        port: UInt16, process: ChildProcess? = nil, timeout: Duration = .seconds(10)
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isListening(port: port) { return true }
            if let process, !process.isRunning { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        // A last look: on a busy machine this task may have slept past the deadline while the
        // server came up.
        return isListening(port: port)
    }

    /// Accepts connections on `listener` until `isStopped` says so (asked at least every 50 ms),
    /// handing each new socket to `accepted`: the accept loop of the scripted test servers.
    static func acceptConnections(on listener: Int32, until isStopped: () -> Bool, _ accepted: (Int32) -> Void) {
        while !isStopped() {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            accepted(connection)
        }
    }

    /// Waits until `active` (the connections a stopped test server still serves) is 0, at most 5 s.
    static func waitForConnectionsToEnd(_ active: () -> Int) async {
        let deadline = ContinuousClock.now + .seconds(5)
        while active() > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

extension LocalNetwork {
    /// Waits until nothing accepts connections on 127.0.0.1:`port`, or `timeout` passes.
    ///
    /// - Returns: Whether the port stopped accepting.
    public static func waitUntilStoppedListening(port: UInt16, timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !isListening(port: port) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A port held by a bound socket that never listens: connections to it are refused.
public final class RefusingPort: Sendable {
    private let descriptor: Int32
    /// The port.
    public let port: UInt16

    init(descriptor: Int32, port: UInt16) {
        self.descriptor = descriptor
        self.port = port
    }

    deinit { close(descriptor) }
}
