import Core
import Foundation
import HTTP
import TestSupport
import Testing

/// The client against a real nginx: bodies, keep-alive, ranges, If-Range, 416, redirects.
@Suite(.requires(.nginx)) struct HTTPClientNginxTests {
    @Test func fetchesABodyIdenticalToTheFile() async throws {
        let root = try TestRun.makeTemporaryDirectory("client-root")
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        try Data(bytes).write(to: root.appendingPathComponent("file.bin"))
        let nginx = try await Nginx.static(root: root)
        let client = try HTTPClient()
        let (head, body) = try await client.data(for: HTTPClientRequest(url: nginx.url("file.bin")))
        #expect(head.status == .ok)
        #expect(head.contentLength == 300_000)
        #expect(head.rangeOutcome == .notRequested)
        #expect(body == bytes)
        await client.shutdown()
        await nginx.stop()
    }
}
