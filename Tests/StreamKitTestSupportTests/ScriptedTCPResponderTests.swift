import Foundation
import StreamKitTestSupport
import Testing

@Suite struct ScriptedTCPResponderTests {
    @Test(.requires(.curl))
    func playsAResponseAndRecordsTheRequest() async throws {
        let body = Array("hello".utf8)
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "5")], body: body)),
            .close,
        ])
        let result = try await Tool.curl.run(["-s", responder.url("x").absoluteString])
        #expect(result.standardOutput == "hello")
        #expect(responder.connectionCount == 1)
        #expect(responder.requests.first?.hasPrefix("GET /x HTTP/1.1\r\n") == true)
        await responder.stop()
    }

    /// curl's exit codes tell the faults apart: 18 partial file, 56 receive failure (reset), 28 timeout.
    @Test(.requires(.curl))
    func stagesCloseEarlyResetAndStall() async throws {
        let announced = ScriptedTCPResponder.httpResponse(
            status: 200, headers: [("Content-Length", "100")], body: Array(repeating: 1, count: 10))
        let closeEarly = try ScriptedTCPResponder(steps: [.readRequestHead, .send(announced), .close])
        let reset = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send(announced), .sleep(.milliseconds(50)), .reset,
        ])
        let stall = try ScriptedTCPResponder(steps: [.readRequestHead, .stall])
        let garbage = try ScriptedTCPResponder(steps: [.readRequestHead, .send("NOT HTTP AT ALL\r\n\r\n"), .close])
        func curlStatus(_ responder: ScriptedTCPResponder, _ extra: [String] = []) async throws -> Int32 {
            try await Tool.curl.run(
                ["-s", "-o", "/dev/null"] + extra + [responder.url().absoluteString], allowFailure: true
            ).status
        }
        #expect(try await curlStatus(closeEarly) == 18)
        #expect(try await curlStatus(reset) == 56)
        #expect(try await curlStatus(stall, ["--max-time", "1"]) == 28)
        #expect(try await curlStatus(garbage, ["--http1.1"]) != 0)
        for responder in [closeEarly, reset, stall, garbage] { await responder.stop() }
    }

    @Test(.requires(.curl))
    func scriptsCanDifferPerConnection() async throws {
        let responder = try ScriptedTCPResponder { index in
            [
                .readRequestHead,
                .send(
                    ScriptedTCPResponder.httpResponse(
                        status: index == 0 ? 503 : 200, headers: [("Content-Length", "0")])), .close,
            ]
        }
        let first = try await Tool.curl.run([
            "-s", "-o", "/dev/null", "-w", "%{http_code}", responder.url().absoluteString,
        ])
        let second = try await Tool.curl.run([
            "-s", "-o", "/dev/null", "-w", "%{http_code}", responder.url().absoluteString,
        ])
        #expect(first.standardOutput == "503" && second.standardOutput == "200")
        await responder.stop()
    }
}
