import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP server on 127.0.0.1 that plays a script on each connection: read the request, send
/// these bytes, wait, then close, reset or stall. For fault tests that nginx cannot stage:
/// a reset mid-body, a close before the announced length, a garbage status line, a server that
/// never answers.
public final class ScriptedTCPResponder: Sendable {
    /// One action on a connection.
    public enum Step: Sendable {
        /// Read until the end of an HTTP request head (a blank line), or until the peer closes.
        case readRequestHead
        /// Read exactly this many bytes (fewer if the peer closes).
        case read(byteCount: Int)
        /// Send these bytes.
        case send([UInt8])
        /// Send these bytes one at a time with a pause between them.
        case sendSlowly([UInt8], interval: Duration)
        /// Do nothing for a while.
        case sleep(Duration)
        /// Read and drop whatever arrives for a while, so that a `close` that follows is a FIN
        /// (closing with unread bytes would reset the connection).
        case drain(Duration)
        /// Keep the connection open, sending nothing, until the peer closes or the responder stops.
        case stall
        /// Close the connection normally (FIN).
        case close
        /// Abort the connection (RST): linger with a zero timeout, then close.
        case reset

        /// Sends UTF-8 text.
        public static func send(_ text: String) -> Step { .send(Array(text.utf8)) }
    }

    /// The port it listens on.
    public let port: UInt16

    private let listener: Int32
    private let script: @Sendable (Int) -> [Step]
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var connections = 0
        var active = 0
        var requests: [String] = []
    }

    /// Starts listening; every connection plays `steps`.
    public convenience init(steps: [Step]) throws {
        try self.init { _ in steps }
    }

    /// Starts listening; connection number `n` (from 0) plays `script(n)`.
    public init(script: @escaping @Sendable (_ connectionIndex: Int) -> [Step]) throws {
        self.script = script
        (listener, port) = try LocalNetwork.listeningSocket(backlog: 128)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { close(listener) }

    /// `http://127.0.0.1:<port>/<path>`.
    public func url(_ path: String = "") -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// The number of connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }

    /// The request heads read so far, in order of arrival.
    public var requests: [String] { state.withLock { $0.requests } }

    /// Stops accepting, ends every stalled connection, and waits (up to 5 s) for them to close.
    public func stop() async {
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        await LocalNetwork.waitForConnectionsToEnd { state.withLock { $0.active } }
    }

    /// An HTTP/1.1 response as bytes, for `.send`.
    public static func httpResponse(
        status: Int, reason: String = "OK", headers: [(String, String)] = [], body: [UInt8] = []
    ) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    // MARK: Private

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        LocalNetwork.acceptConnections(on: listener, until: { isStopped }) { connection in
            let index = state.withLock { state in
                state.connections += 1
                state.active += 1
                return state.connections - 1
            }
            let steps = script(index)
            let thread = Thread { [self] in
                play(steps, on: connection)
                state.withLock { $0.active -= 1 }
            }
            thread.start()
        }
    }

    private func play(_ steps: [Step], on connection: Int32) {
        var noSignal: Int32 = 1
        #if canImport(Darwin)
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        #else
        _ = noSignal
        #endif
        for step in steps {
            switch step {
            case .readRequestHead:
                var received: [UInt8] = []
                while !received.suffix(4).elementsEqual([13, 10, 13, 10]) {
                    guard let byte = readByte(connection) else { break }
                    received.append(byte)
                }
                state.withLock { $0.requests.append(String(decoding: received, as: UTF8.self)) }
            case .read(let byteCount):
                for _ in 0..<byteCount where readByte(connection) == nil { break }
            case .send(let bytes):
                sendAll(bytes, on: connection)
            case .sendSlowly(let bytes, let interval):
                for byte in bytes where !isStopped {
                    sendAll([byte], on: connection)
                    Thread.sleep(forTimeInterval: interval.seconds)
                }
            case .sleep(let duration):
                Thread.sleep(forTimeInterval: duration.seconds)
            case .drain(let duration):
                let deadline = ContinuousClock.now + duration
                while !isStopped, ContinuousClock.now < deadline {
                    var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                    if poll(&descriptor, 1, 10) > 0 {
                        var bytes = [UInt8](repeating: 0, count: 4_096)
                        if recv(connection, &bytes, bytes.count, 0) <= 0 { break }
                    }
                }
            case .stall:
                while !isStopped {
                    var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                    if poll(&descriptor, 1, 50) > 0 {
                        var byte: UInt8 = 0
                        if recv(connection, &byte, 1, 0) <= 0 { break }
                    }
                }
            case .close:
                close(connection)
                return
            case .reset:
                var linger = makeLinger(onoff: 1, seconds: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                close(connection)
                return
            }
        }
        close(connection)
    }

    private func readByte(_ connection: Int32) -> UInt8? {
        while !isStopped {
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            var byte: UInt8 = 0
            return recv(connection, &byte, 1, 0) == 1 ? byte : nil
        }
        return nil
    }

    private func sendAll(_ bytes: [UInt8], on connection: Int32) {
        var offset = 0
        while offset < bytes.count && !isStopped {
            let sent = bytes[offset...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 {
                if sent < 0 && errno == EINTR { continue }
                return
            }
            offset += sent
        }
    }
}

private func makeLinger(onoff: Int32, seconds: Int32) -> linger {
    linger(l_onoff: onoff, l_linger: seconds)
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
