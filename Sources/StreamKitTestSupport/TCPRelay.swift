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
/// ``refuseConnections(for:)`` plays an outage: open connections are closed and new ones refused
/// (the port is held by a socket that does not listen) until it ends. A ``RelayLink`` other than
/// ``RelayLink/direct`` carries each connection as a network link: delayed, paced.
public final class TCPRelay: Sendable {
    /// The port clients connect to.
    public let port: UInt16

    private let upstreamPort: UInt16
    private let link: RelayLink
    private let cutAfter: @Sendable (Int) -> Int?
    private let state: Mutex<State>
    private let downstream = Atomic<Int>(0)

    private struct State {
        var stopped = false
        var connections = 0
        var mostOpen = 0
        var cuts = 0
        var outages = 0
        var open: Set<Int32> = []
        /// The listening socket, or during an outage the socket holding the port.
        var listener: Int32
        /// When the outage asked for ends; `nil` when none is asked for.
        var refusingUntil: ContinuousClock.Instant?
        /// Whether ``listener`` is the holding socket.
        var refusing = false
    }

    /// Starts relaying to `upstreamPort` over `link`; connection number `n` (from 0) is cut after
    /// `cutAfter(n)` bytes downstream.
    public init(
        upstreamPort: UInt16, link: RelayLink = .direct,
        cutAfter: @escaping @Sendable (_ connectionIndex: Int) -> Int? = { _ in nil }
    ) throws {
        self.upstreamPort = upstreamPort
        self.link = link
        self.cutAfter = cutAfter
        let (listener, port) = try LocalNetwork.listeningSocket(backlog: 16)
        self.port = port
        state = Mutex(State(listener: listener))
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { _ = state.withLock { close($0.listener) } }

    /// Connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }

    /// The most connections open at once so far.
    public var mostOpenConnections: Int { state.withLock { $0.mostOpen } }

    /// Connections cut so far.
    public var cutCount: Int { state.withLock { $0.cuts } }

    /// Outages begun so far.
    public var outageCount: Int { state.withLock { $0.outages } }

    /// Bytes relayed from the server to clients so far: what clients fetched, headers included.
    public var bytesDownstream: Int { downstream.load(ordering: .relaxed) }

    /// Closes every relayed connection and refuses new ones for `duration` (connection refused,
    /// as from a host whose server is down). Returns at once; the relay listens again by itself.
    public func refuseConnections(for duration: Duration) {
        state.withLock { $0.refusingUntil = .now + duration }
    }

    /// Stops accepting and closes every relayed connection.
    public func stop() async {
        let (open, listener) = state.withLock { state in
            state.stopped = true
            return (state.open, state.listener)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        try? await Task.sleep(for: .milliseconds(100))
    }

    // MARK: Private

    /// Begins or ends an outage when one is due; on the accept thread, so that the listening
    /// socket never changes under `poll` or `accept`. Returns the socket to accept on, `nil`
    /// during an outage.
    private func currentListener() -> Int32? {
        state.withLock { state -> Int32? in
            let due = state.refusingUntil.map { ContinuousClock.now < $0 } ?? false
            if due, !state.refusing {
                // The port is held by a bound socket that does not listen: connecting is refused,
                // and no other server can take the port meanwhile.
                close(state.listener)
                guard let holder = try? LocalNetwork.listeningSocket(backlog: nil, port: port) else { return nil }
                state.listener = holder.descriptor
                state.refusing = true
                state.outages += 1
                for descriptor in state.open { shutdown(descriptor, Int32(SHUT_RDWR)) }
            } else if !due, state.refusing {
                guard let listening = try? LocalNetwork.listeningSocket(backlog: 16, port: port) else { return nil }
                close(state.listener)
                state.listener = listening.descriptor
                state.refusing = false
                state.refusingUntil = nil
            }
            return state.refusing ? nil : state.listener
        }
    }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            guard let listener = currentListener() else {
                usleep(20_000)
                continue
            }
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
                state.mostOpen = max(state.mostOpen, state.open.count / 2)
                return state.connections - 1
            }
            let limit = cutAfter(index)
            let finished = Atomic(0)
            let cut = Atomic(false)
            let closeBoth: @Sendable () -> Void = { [self] in
                guard finished.add(1, ordering: .acquiringAndReleasing).newValue == 2 else { return }
                state.withLock { $0.open.subtract([client, upstream]) }
                if cut.load(ordering: .acquiring) {
                    // The reset discards what the client's socket has not put on the wire yet
                    // (SIOCOUTQNSD): the client never fetched those bytes.
                    var unsent: Int32 = 0
                    if ioctl(client, 0x894B, &unsent) == 0 { downstream.subtract(Int(unsent), ordering: .relaxed) }
                }
                close(client)
                close(upstream)
            }
            Thread { [self] in
                _ = pump(from: client, to: upstream, limit: nil, countsDownstream: false)
                shutdown(upstream, Int32(SHUT_WR))
                closeBoth()
            }.start()
            Thread { [self] in
                if pump(from: upstream, to: client, limit: limit, countsDownstream: true) {
                    state.withLock { $0.cuts += 1 }
                    cut.store(true, ordering: .releasing)
                    // Closed with a zero linger, the client's socket sends a reset; until then
                    // (the other thread's pump ends), nothing more is relayed.
                    var abortive = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
                    shutdown(upstream, Int32(SHUT_RDWR))
                    shutdown(client, Int32(SHUT_RD))
                } else {
                    shutdown(client, Int32(SHUT_WR))
                }
                closeBoth()
            }.start()
        }
    }

    /// Copies bytes until end of stream or error; returns true when it stopped at `limit`.
    private func pump(from source: Int32, to destination: Int32, limit: Int?, countsDownstream: Bool) -> Bool {
        if !link.isDirect {
            return DelayedPipe(link: link).run(from: source, to: destination, limit: limit) { [self] sent in
                if countsDownstream { downstream.add(sent, ordering: .relaxed) }
            }
        }
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
            if countsDownstream { downstream.add(received, ordering: .relaxed) }
        }
    }
}
