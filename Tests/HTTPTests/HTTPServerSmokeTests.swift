import Core
import HTTP
import TestSupport
import Testing

@Suite struct HTTPServerSmokeTests {
    @Test func answersAGet() async throws {
        var router = HTTPRouter()
        router.get("/hello") { _ in .text("hello\n") }
        let server = try HTTPServer.start(configuration: .init(), router: router)
        let port = server.port
        let response = try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return try connection.readResponse()
        }
        #expect(response.status == 200)
        #expect(response.text == "hello\n")
        await server.shutdown()
    }
}
