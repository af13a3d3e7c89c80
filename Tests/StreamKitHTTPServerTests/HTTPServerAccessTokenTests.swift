import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitTestSupport
import Synchronization
import Testing

/// The access token over real sockets: a server on every interface (0.0.0.0, reached through
/// 127.0.0.1) wants it for every request; the sign-in URL sets it as a cookie; requests that change
/// state want it and the same origin on any server; a loopback server still lets anyone read.
@Suite struct HTTPServerAccessTokenTests {
    /// A `TestServer` with a page at `/`, listening on `host`.
    private func start(
        host: String, _ configure: @escaping (inout HTTPServerConfiguration) -> Void = { _ in }
    )
        throws -> TestServer
    {
        try TestServer.start(
            { configuration in
                configuration.host = host
                configure(&configuration)
            },
            extraRoutes: { $0.get("/") { _ in .html("<p>library</p>") } })
    }

    @Test func aServerOffLoopbackWantsTheTokenForEveryRead() async throws {
        let test = try start(host: "0.0.0.0")
        let token = test.server.accessToken
        #expect(test.server.isReachableFromNetwork)
        for target in ["/", "/hello", "/files/ten.bin", "/api/tasks", "/library/x/index.m3u8", "/proxy/file?url=x"] {
            let response = try await test.get(target)
            #expect(response.status == 401, "\(target)")
            #expect(response.header("WWW-Authenticate") == "Bearer realm=\"streamkit\"")
            #expect(response.header("Set-Cookie") == nil)
        }
        #expect(try await test.get("/", "Authorization: Bearer \(token)\r\n").status == 200)
        #expect(try await test.get("/files/ten.bin", "X-StreamKit-Token: \(token)\r\n").status == 200)
        #expect(try await test.get("/hello", "Authorization: Bearer \(token.dropLast())x\r\n").status == 401)
        // The cookie by its name for this port only: another server's cookie is not this one's.
        let cookie = "streamkit-token-\(test.port)"
        #expect(test.server.tokenCookieName == cookie)
        #expect(try await test.get("/hello", "Cookie: a=1; \(cookie)=\(token); b=2\r\n").status == 200)
        #expect(try await test.get("/hello", "Cookie: streamkit-token-\(test.port &+ 1)=\(token)\r\n").status == 401)
        #expect(try await test.get("/hello", "Cookie: \(cookie)=\(token.uppercased())x\r\n").status == 401)
        await test.stop()
    }

    @Test func theSignInURLSetsAStrictHttpOnlyCookieAndRedirectsWithoutTheToken() async throws {
        let test = try start(host: "0.0.0.0")
        let token = test.server.accessToken
        #expect(test.server.signInURL == "http://127.0.0.1:\(test.port)/?token=\(token)")

        let signIn = try await test.get("/?token=\(token)")
        #expect(signIn.status == 303)
        #expect(signIn.header("Location") == "/")
        #expect(signIn.header("Cache-Control") == "no-store")
        #expect(signIn.header("Referrer-Policy") == "no-referrer")
        let setCookie = try #require(signIn.header("Set-Cookie"))
        let attributes = setCookie.split(separator: ";").map { $0.trimmingPrefix(" ") }
        #expect(attributes.first == "streamkit-token-\(test.port)=\(token)"[...])
        #expect(Set(attributes.dropFirst()) == ["HttpOnly", "SameSite=Strict", "Path=/"])

        // Following the redirect with the cookie, as a browser does.
        let cookie = String(attributes[0])
        let page = try await test.get("/", "Cookie: \(cookie)\r\n")
        #expect(page.status == 200 && page.text == "<p>library</p>")

        // Any route: the other query pairs stay as sent; HEAD too.
        let media = try await test.get("/files/ten.bin?a=1&token=\(token)&b=%2F")
        #expect(media.status == 303 && media.header("Location") == "/files/ten.bin?a=1&b=%2F")
        let head = try await test.exchange(
            "HEAD /files/ten.bin?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1:\(test.port)\r\n\r\n", bodyless: true)
        #expect(head.status == 303 && head.header("Location") == "/files/ten.bin" && head.header("Set-Cookie") != nil)
        // A path that would read as another host in Location stays on this one.
        let doubled = try await test.get("//evil.example/x?token=\(token)")
        #expect(doubled.status == 303 && doubled.header("Location") == "/.//evil.example/x")
        await test.stop()
    }

    @Test(arguments: ["0.0.0.0", "127.0.0.1"])
    func aWrongTokenInTheURLIs401WithoutACookie(host: String) async throws {
        let test = try start(host: host)
        let token = test.server.accessToken
        let wrong = (token.first == "0" ? "1" : "0") + token.dropFirst()
        for target in ["/?token=\(wrong)", "/?token=", "/hello?token=\(token)x", "/?token=\(token)&token=\(wrong)"] {
            let response = try await test.get(target)
            #expect(response.status == 401, "\(target)")
            #expect(response.header("Set-Cookie") == nil, "\(target)")
            #expect(!response.text.contains(token), "\(target)")
        }
        await test.stop()
    }

    @Test(arguments: ["0.0.0.0", "127.0.0.1"])
    func aStateChangeWantsTheTokenAndTheSameOrigin(host: String) async throws {
        let test = try start(host: host) { $0.allowedOrigins = ["http://player.example:8080"] }
        let token = test.server.accessToken
        let port = test.port
        func post(_ fields: String) async throws -> Int { try await test.postStatus(fields) }
        let cookie = "Cookie: streamkit-token-\(port)=\(token)\r\n"
        #expect(try await post("") == 401)
        #expect(try await post("Origin: http://127.0.0.1:\(port)\r\n") == 401, "the origin is no credential")
        #expect(try await post("\(cookie)Origin: http://evil.example\r\n") == 403)
        #expect(try await post("\(cookie)Origin: null\r\n") == 403)
        #expect(try await post("\(cookie)Sec-Fetch-Site: cross-site\r\n") == 403)
        #expect(try await post("\(cookie)Sec-Fetch-Site: same-site\r\n") == 403)
        #expect(try await post("Authorization: Bearer \(token)\r\nOrigin: http://evil.example\r\n") == 403)
        #expect(test.probe.requests.load(ordering: .relaxed) == 0, "refused requests never reach the handler")

        #expect(try await post("\(cookie)Origin: http://127.0.0.1:\(port)\r\nSec-Fetch-Site: same-origin\r\n") == 200)
        #expect(try await post(cookie) == 200)
        #expect(try await post("Authorization: Bearer \(token)\r\nOrigin: http://player.example:8080\r\n") == 200)
        #expect(test.probe.requests.load(ordering: .relaxed) == 3)
        await test.stop()
    }

    @Test func aLoopbackServerStillLetsAnyoneRead() async throws {
        let test = try start(host: "127.0.0.1")
        #expect(!test.server.isReachableFromNetwork)
        #expect(try await test.get("/").status == 200)
        #expect(try await test.get("/files/ten.bin").status == 200)
        #expect(try await test.get("/private").status == 401, "a route that asks for the token still does")
        await test.stop()
    }

    @Test func theTokenIsNeverLogged() async throws {
        let records = InMemoryLogHandler()
        var router = HTTPRouter()
        router.get("/") { _ in .text("hi\n") }
        router.get("/fails") { _ in throw CancellationError() }
        let server = try HTTPServer.start(
            configuration: HTTPServerConfiguration(host: "0.0.0.0", port: 0), router: router,
            logger: Logger(label: "test", level: .trace, handler: records))
        let token = server.accessToken
        let port = server.port
        let wrong = String(repeating: "f", count: 32)
        for request in [
            "GET /?token=\(token) HTTP/1.1\r\n", "GET /?token=\(wrong) HTTP/1.1\r\n",
            "GET /fails?token=\(wrong) HTTP/1.1\r\n",
            "GET /fails?token=\(token) HTTP/1.1\r\nAuthorization: Bearer \(token)\r\n",
            "GET /nope HTTP/1.1\r\nCookie: streamkit-token-\(port)=\(token)\r\n",
            "GET /fails HTTP/1.1\r\nCookie: streamkit-token-\(port)=\(token)\r\n",
        ] {
            _ = try await runBlocking {
                let connection = try RawHTTPConnection(port: port)
                try connection.send(request + "Host: 127.0.0.1:\(port)\r\n\r\n")
                return try connection.readResponse()
            }
        }
        await server.shutdown(gracePeriod: .seconds(2))
        let messages = records.records.map(\.message)
        #expect(messages.contains { $0.contains("without a valid token") }, "the refusals are logged: \(messages)")
        #expect(messages.contains { $0.contains("/fails failed") }, "the failures are logged: \(messages)")
        #expect(!messages.contains { $0.contains(token) || $0.contains(wrong) }, "\(messages)")
    }
}
