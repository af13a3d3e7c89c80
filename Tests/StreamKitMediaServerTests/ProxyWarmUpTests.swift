import Foundation
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitHTTPServer
import StreamKitTestSupport
import Testing

@testable import StreamKitMediaServer

@Suite struct ProxyWarmUpTests {
    /// The warm-up reads its file through a throwaway proxy and cache (it throws when the bytes
    /// are wrong), and leaves nothing behind.
    @Test func theWarmUpReadsThroughAThrowawayProxyAndLeavesNothing() async throws {
        let parent = try TestRun.makeTemporaryDirectory("warm-up").path
        try await ProxyWarmUp.run(client: proxyTestClient, in: parent)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent).isEmpty)
        // The client it was lent still works.
        var router = HTTPRouter()
        router.add(.get, "/ok", runsOnEventLoop: { _ in .text("ok") })
        let server = try HTTPServer.start(configuration: HTTPServerConfiguration(), router: router)
        let response = try await proxyTestClient.data(for: HTTPClientRequest(url: server.baseURL + "ok"))
        #expect(String(decoding: response.body, as: UTF8.self) == "ok")
        await server.shutdown()
    }
}
