import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP relay on 127.0.0.1 in front of a real server that can drop a connection mid-stream:
/// for a client's reconnect logic against a server (nginx-rtmp) that cannot be told to drop one.
///
/// Each accepted connection is relayed to `127.0.0.1:<upstreamPort>` in both directions. When
/// `cutAfter(n)` gives a byte count for connection `n`, that connection is reset (RST to the
/// client, close to the server) once that many bytes have gone from the server to the client.
public final class TCPRelay: Sendable {
    /// The port clients connect to.
    public let port: UInt16

    private let listener: Int32
    private let upstreamPort: UInt16
    private let cutAfter: @Sendable (Int) -> Int?
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var connections = 0
        var cuts = 0
        var open: Set<Int32> = []
    }

    /// Starts relaying to `upstreamPort`; connection number `n` (from 0) is cut after `cutAfter(n)` bytes downstream.
    public init(
        upstreamPort: UInt16, cutAfter: @escaping @Sendable (_ connectionIndex: Int) -> Int? = { _ in nil }
    ) throws {
        self.upstreamPort = upstreamPort
        self.cutAfter = cutAfter
        (listener, port) = try LocalNetwork.listeningSocket(backlog: 16)
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { close(listener) }

    /// Connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }

    /// Connections cut so far.
    public var cutCount: Int { state.withLock { $0.cuts } }

    /// Stops accepting and closes every relayed connection.
    public func stop() async {
        let open = state.withLock { state in
            state.stopped = true
            return state.open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        try? await Task.sleep(for: .milliseconds(100))
    }

    // MARK: Private

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            var pollDescriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pollDescriptor, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = LocalNetwork.loopbackAddress(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard upstream >= 0, connected == 0 else {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            let index = state.withLock { state in
                state.connections += 1
                state.open.formUnion([client, upstream])
                return state.connections - 1
            }
            let limit = cutAfter(index)
            let finished = Atomic(0)
            let closeBoth: @Sendable () -> Void = { [self] in
                guard finished.add(1, ordering: .acquiringAndReleasing).newValue == 2 else { return }
                state.withLock { $0.open.subtract([client, upstream]) }
                close(client)
                close(upstream)
            }
            Thread { [self] in
                _ = pump(from: client, to: upstream, limit: nil)
                shutdown(upstream, Int32(SHUT_WR))
                closeBoth()
            }.start()
            Thread { [self] in
                if pump(from: upstream, to: client, limit: limit) {
                    state.withLock { $0.cuts += 1 }
                    var abortive = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
                    shutdown(upstream, Int32(SHUT_RDWR))
                    shutdown(client, Int32(SHUT_RDWR))
                } else {
                    shutdown(client, Int32(SHUT_WR))
                }
                closeBoth()
            }.start()
        }
    }

    /// Copies bytes until end of stream or error; returns true when it stopped at `limit`.
    private func pump(from source: Int32, to destination: Int32, limit: Int?) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var total = 0
        while true {
            let wanted = limit.map { min(buffer.count, $0 - total) } ?? buffer.count
            if wanted <= 0 { return true }
            let received = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, wanted, 0) }
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return false }
            var offset = 0
            while offset < received {
                let sent = buffer[offset..<received].withUnsafeBytes {
                    send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            total += received
        }
    }
}
