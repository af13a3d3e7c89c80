import Foundation
import StreamKitTestSupport
import Testing

@Suite struct RawHTTPConnectionTests {
    /// A body without a length runs to the close; bytes that came in the same read as the head
    /// count once (they were counted twice, which failed an HTTP/1.0 server test now and then).
    @Test func aCloseDelimitedBodyReadWithItsHeadIsKeptOnce() async throws {
        let body = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send(Array("HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n".utf8) + body), .close,
        ])
        let port = responder.port
        let response = try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            usleep(200_000)  // the head and the body are in before the first read
            return try connection.readResponse()
        }
        #expect(response.status == 200)
        #expect(response.body == body)
        await responder.stop()
    }
}
