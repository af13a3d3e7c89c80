import Foundation
import StreamKitCore
import StreamKitRTMP
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The TCP session: connect, status events, read, write, disconnect.
@Suite struct RTMPSocketTests {
    /// Collects the events seen so far.
    private actor EventLog {
        var events: [RTMPSocket.Event] = []
        func append(_ event: RTMPSocket.Event) { events.append(event) }
    }

    @Test func statusEventsReadWriteAndEnd() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send("hello"), .sleep(.milliseconds(50)), .close,
        ])
        let socket = RTMPSocket()
        let log = EventLog()
        let watcher = Task { for await event in socket.events { await log.append(event) } }
        #expect(RTMPURL.defaultPort == 1935)
        try await socket.connect(host: "127.0.0.1", port: responder.port)
        #expect(await socket.isConnected)
        try await socket.write(Array("PING\r\n\r\n".utf8))
        var received: [UInt8] = []
        while true {
            let bytes = try await socket.read()
            if bytes.isEmpty { break }
            received += bytes
        }
        #expect(String(decoding: received, as: UTF8.self) == "hello")
        #expect(responder.requests == ["PING\r\n\r\n"])
        await socket.disconnect()
        await socket.finishEvents()
        await watcher.value
        let events = await log.events
        #expect(events.first == .opened)
        #expect(events.contains(.writable) && events.contains(.readable))
        #expect(events.last == .ended)
        await #expect(throws: RTMPError.invalidState("")) { try await socket.write([1]) }
        await responder.stop()
    }

    /// A reset is an error event and a `connectionLost` error naming the peer.
    @Test func resetIsAnErrorEvent() async throws {
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .reset])
        let socket = RTMPSocket()
        let log = EventLog()
        let watcher = Task { for await event in socket.events { await log.append(event) } }
        try await socket.connect(host: "127.0.0.1", port: responder.port)
        try await socket.write(Array("GO\r\n\r\n".utf8))
        do {
            _ = try await socket.read()
            Issue.record("read after a reset returned data")
        } catch {
            #expect(
                error.kind == .connectionLost && error.description.contains("127.0.0.1:\(responder.port)"), "\(error)")
        }
        await socket.disconnect()
        await socket.finishEvents()
        await watcher.value
        #expect(
            await log.events.contains {
                if case .error(let error) = $0 { error.kind == .connectionLost } else { false }
            })
        await responder.stop()
    }

    @Test func readsInFourKilobytePiecesByDefault() async throws {
        let payload = [UInt8](repeating: 0x41, count: 10_000)
        let responder = try ScriptedTCPResponder(steps: [.send(payload), .sleep(.milliseconds(200)), .close])
        let socket = RTMPSocket()
        try await socket.connect(host: "127.0.0.1", port: responder.port)
        var sizes: [Int] = []
        while true {
            let bytes = try await socket.read()
            if bytes.isEmpty { break }
            sizes.append(bytes.count)
        }
        #expect(sizes.reduce(0, +) == 10_000 && sizes.allSatisfy { $0 <= 4_096 })
        await socket.disconnect()
        await responder.stop()
    }

    @Test func refusedConnectionFails() async throws {
        let refusing = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let socket = RTMPSocket()
        do {
            try await socket.connect(host: "127.0.0.1", port: port)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.kind == .connectionFailed && error.description.contains("127.0.0.1:\(port)"))
        }
    }

    /// A listener whose accept queue is full drops new SYNs, so the connect hangs until its timeout.
    @Test func connectTimesOut() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        listen(listener, 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        // Fill the queue.
        var fillers: [RTMPSocket] = []
        for _ in 0..<3 {
            let filler = RTMPSocket(configuration: .init(connectTimeout: .milliseconds(300)))
            try? await filler.connect(host: "127.0.0.1", port: port)
            fillers.append(filler)
        }
        let socket = RTMPSocket(configuration: .init(connectTimeout: .milliseconds(300)))
        let started = ContinuousClock.now
        await #expect(throws: RTMPError.connectTimedOut(host: "", port: 0, after: .zero)) {
            try await socket.connect(host: "127.0.0.1", port: port)
        }
        #expect(ContinuousClock.now - started < .seconds(20))
        for filler in fillers { await filler.disconnect() }
    }

    @Test func idleTimeoutEndsAWait() async throws {
        let responder = try ScriptedTCPResponder(steps: [.stall])
        let socket = RTMPSocket(configuration: .init(idleTimeout: .milliseconds(200)))
        try await socket.connect(host: "127.0.0.1", port: responder.port)
        let started = ContinuousClock.now
        await #expect(throws: RTMPError.idleTimeout("", after: .zero)) { try await socket.read() }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(150) && waited < .seconds(20))
        // A longer wait can be asked for one read.
        await #expect(throws: RTMPError.idleTimeout("", after: .zero)) {
            try await socket.read(timeout: .milliseconds(50))
        }
        await socket.disconnect()
        await responder.stop()
    }

    /// A read waiting for data gives up when its task is cancelled.
    @Test func cancellationEndsARead() async throws {
        let responder = try ScriptedTCPResponder(steps: [.stall])
        let socket = RTMPSocket(configuration: .init(idleTimeout: nil))
        try await socket.connect(host: "127.0.0.1", port: responder.port)
        let reader = Task { try await socket.read() }
        try await Task.sleep(for: .milliseconds(100))
        reader.cancel()
        await #expect(throws: RTMPError.connectionClosed("")) { try await reader.value }
        await socket.disconnect()
        await responder.stop()
    }
}
