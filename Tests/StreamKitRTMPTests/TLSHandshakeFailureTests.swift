import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// TLS handshakes that fail against scripted servers: each ends with a clear error, promptly.
@Suite struct TLSHandshakeFailureTests {
    private func failure(of steps: [ScriptedTCPResponder.Step]) async throws -> RTMPError? {
        let responder = try ScriptedTCPResponder(steps: steps)
        defer { Task { await responder.stop() } }
        let connection = RTMPConnection(
            url: try RTMPURL("rtmps://127.0.0.1:\(responder.port)/live/x"), role: .play,
            configuration: .init(socket: .init(connectTimeout: .milliseconds(500))))
        return await #expect(throws: RTMPError.self) { try await connection.open() }
    }

    @Test func serverAnswersWithoutTLS() async throws {
        let error = try await failure(of: [
            .read(byteCount: 5), .send("HTTP/1.1 400 Bad Request\r\n\r\n"), .drain(.milliseconds(200)), .close,
        ])
        #expect(error?.kind == .tlsHandshakeFailed && error?.detail.hasPrefix("127.0.0.1:") == true)
    }

    @Test func serverClosesDuringTheHandshake() async throws {
        let error = try await failure(of: [.drain(.milliseconds(100)), .close])
        #expect(error?.kind == .tlsHandshakeFailed)
        #expect(
            error?.detail.contains("closed the connection during the handshake") == true, "\(String(describing: error))"
        )
    }

    @Test func silentServerTimesOut() async throws {
        let error = try await failure(of: [.stall])
        #expect(error?.kind == .tlsHandshakeFailed)
        #expect(error?.detail.contains("no answer within") == true, "\(String(describing: error))")
    }
}
