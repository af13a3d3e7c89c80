import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitTestSupport
import Synchronization
import Testing

/// What the test routes observed, shared with the test.
final class RouteProbe: Sendable {
    let chunksWritten = Atomic<Int>(0)
    let streamEnded = Mutex<String?>(nil)
    let requests = Atomic<Int>(0)
    /// Requests of `/slow/...` whose handler has started.
    let slowStarted = Atomic<Int>(0)

    /// How the stream ended, once it has.
    func waitForStreamEnd(timeout: Duration = .seconds(5)) async -> String? {
        _ = await eventually(timeout: timeout, interval: .milliseconds(5)) { streamEnded.withLock { $0 } != nil }
        return streamEnded.withLock { $0 }
    }
}

/// A server on 127.0.0.1:0 with the routes these tests use.
struct TestServer {
    let server: HTTPServer
    let probe: RouteProbe
    let files: URL

    var port: UInt16 { server.port }

    static func start(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        extraRoutes: (inout HTTPRouter) -> Void = { _ in }
    ) throws -> TestServer {
        let probe = RouteProbe()
        let files = try TestRun.makeTemporaryDirectory("http-files")
        try Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: files.appendingPathComponent("ten.bin"))
        try "#EXTM3U\n".write(to: files.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let responder = try HTTPStaticFileResponder(root: files.path)
        var router = HTTPRouter()
        router.add(.get, "/hello", runsOnEventLoop: { _ in .text("hello\n") })
        router.get("/slow/:milliseconds") { request in
            let milliseconds = Int(request.routeParameter("milliseconds") ?? "") ?? 0
            probe.slowStarted.add(1, ordering: .relaxed)
            try await Task.sleep(for: .milliseconds(milliseconds))
            return .text("slept \(milliseconds)\n")
        }
        router.get("/headers") { request in
            .text(request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n"))
        }
        router.post("/echo") { request in
            probe.requests.add(1, ordering: .relaxed)
            return HTTPServerResponse(status: .ok, body: .bytes(request.body))
        }
        router.get("/private", requiresToken: true) { _ in .text("secret\n") }
        router.get("/wait") { _ in
            do {
                try await Task.sleep(for: .seconds(60))
                probe.streamEnded.withLock { $0 = "slept" }
            } catch {
                probe.streamEnded.withLock { $0 = "\(type(of: error))" }
            }
            return .text("late\n")
        }
        router.get("/stream/:count") { request in
            let count = Int(request.routeParameter("count") ?? "") ?? 0
            return HTTPServerResponse(
                headers: ["Content-Type": "application/octet-stream"],
                body: .stream(
                    HTTPBodyStream { writer in
                        do {
                            for index in 0..<count {
                                try await writer.write(Self.chunk(index))
                                probe.chunksWritten.add(1, ordering: .relaxed)
                            }
                            probe.streamEnded.withLock { $0 = "finished" }
                        } catch {
                            probe.streamEnded.withLock { $0 = "\(error)" }
                            throw error
                        }
                    }))
        }
        // Parts of ten.bin sent with sendfile between bytes in memory: chunked, or with a
        // Content-Length (`?length=N`) that cuts the last part short.
        router.get("/mixed") { request in
            let path = files.appendingPathComponent("ten.bin").path
            var headers: HTTPHeaders = [:]
            if let length = request.queryValue("length") {
                headers.add("Content-Length", length)
            }
            return HTTPServerResponse(
                headers: headers,
                body: .stream(
                    HTTPBodyStream { writer in
                        try await writer.write(Array("head|".utf8))
                        try await writer.write(try HTTPFileRegion(path: path, range: ByteRange(100, 4_100)))
                        try await writer.write(Array("|middle|".utf8))
                        try await writer.write(try HTTPFileRegion(path: path, range: ByteRange(9_000, 10_000)))
                    }))
        }
        router.get("/sequence") { _ in
            let chunks = AsyncStream<[UInt8]> { continuation in
                for word in ["one ", "two ", "three"] { continuation.yield(Array(word.utf8)) }
                continuation.finish()
            }
            return HTTPServerResponse(body: .stream(HTTPBodyStream(chunks)))
        }
        router.get("/broken-stream") { _ in
            HTTPServerResponse(
                body: .stream(
                    HTTPBodyStream { writer in
                        try await writer.write(Array("partial".utf8))
                        throw HTTPResponseError(.internalServerError)
                    }))
        }
        router.add(
            .get, "/files/*path",
            runsOnEventLoop: { request in
                responder.respond(to: request, rawPath: request.rawRouteParameter("path") ?? "")
            })
        router.get("/teapot") { _ in throw HTTPResponseError(HTTPStatus(418), message: "short and stout") }
        router.get("/crash") { _ in throw CocoaError(.fileNoSuchFile) }
        router.get("/inject") { _ in
            HTTPServerResponse(headers: ["X-Good": "yes", "X-Bad": "no\r\nSet-Cookie: stolen=1"], body: .bytes([]))
        }
        extraRoutes(&router)
        var configuration = HTTPServerConfiguration()
        configure(&configuration)
        return TestServer(
            server: try HTTPServer.start(configuration: configuration, router: router), probe: probe, files: files)
    }

    /// The bytes of chunk `index` of `/stream`: 64 KiB, recognisable by index (byte `i` is
    /// `i + 7 * index` modulo 256). Cut from one pattern made once: a debug build making 64 KiB
    /// byte by byte for every chunk of a stream held a thread of the cooperative pool for seconds.
    static func chunk(_ index: Int) -> [UInt8] {
        let offset = (index &* 7) & 255
        return Array(chunkPattern[offset..<(offset + 65_536)])
    }

    private static let chunkPattern: [UInt8] = (0..<(65_536 + 256)).map { UInt8(truncatingIfNeeded: $0) }

    func stop() async { await server.shutdown(gracePeriod: .seconds(2)) }

    /// Sends `text` on a new connection and reads one response.
    func exchange(_ text: String, bodyless: Bool = false) async throws -> RawHTTPResponse {
        let port = port
        return try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send(text)
            return try connection.readResponse(bodyless: bodyless)
        }
    }

    /// A GET of `target` with the right Host.
    func get(_ target: String, _ fields: String = "") async throws -> RawHTTPResponse {
        try await exchange("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(fields)\r\n")
    }

    /// The status of a POST of two bytes to `/echo` with the right Host and `fields`.
    func postStatus(_ fields: String) async throws -> Int {
        try await exchange("POST /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(fields)Content-Length: 2\r\n\r\nhi")
            .status
    }
}

@Suite struct HTTPServerTests {
    @Test func portZeroPicksAPortAndTheBaseURLNamesIt() async throws {
        let test = try TestServer.start()
        #expect(test.port != 0)
        #expect(test.server.baseURL == "http://127.0.0.1:\(test.port)/")
        #expect(!test.server.isReachableFromNetwork)
        let response = try await test.get("/hello")
        #expect(response.status == 200 && response.text == "hello\n")
        #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(response.header("Content-Length") == "6")
        #expect(response.header("Server") == "StreamKit")
        #expect(response.header("Date").flatMap(HTTPDate.parse) != nil)
        await test.stop()
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() async throws {
        let test = try TestServer.start()
        let port = test.port
        let statuses = try await runBlocking { () -> [Int] in
            let connection = try RawHTTPConnection(port: port)
            var statuses: [Int] = []
            for target in ["/hello", "/files/ten.bin", "/slow/1", "/nope", "/hello"] {
                try connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                statuses.append(try connection.readResponse().status)
            }
            return statuses
        }
        #expect(statuses == [200, 200, 200, 404, 200])
        await test.stop()
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let test = try TestServer.start()
        let port = test.port
        // The first takes longest: answering in completion order would reorder them.
        let targets = ["/slow/150", "/slow/50", "/hello", "/slow/0", "/files/index.m3u8"]
        let bodies = try await runBlocking { () -> [String] in
            let connection = try RawHTTPConnection(port: port)
            try connection.send(targets.map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n" }.joined())
            return try targets.map { _ in try connection.readResponse().text }
        }
        #expect(bodies == ["slept 150\n", "slept 50\n", "hello\n", "slept 0\n", "#EXTM3U\n"])
        await test.stop()
    }

    @Test func headSendsTheHeadersOfGetWithoutTheBody() async throws {
        let test = try TestServer.start()
        let port = test.port
        let (get, head, afterwards) = try await runBlocking {
            () -> (RawHTTPResponse, RawHTTPResponse, RawHTTPResponse) in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /files/ten.bin HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            let get = try connection.readResponse()
            try connection.send("HEAD /files/ten.bin HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            let head = try connection.readResponse(bodyless: true)
            // Nothing of a body may follow the HEAD response: the next response comes next.
            try connection.send("HEAD /stream/3 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            let stream = try connection.readResponse(bodyless: true)
            try connection.send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            #expect(try connection.readResponse().text == "hello\n")
            return (get, head, stream)
        }
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == "10000" && get.header("Content-Length") == "10000")
        #expect(head.header("ETag") == get.header("ETag") && head.header("ETag") != nil)
        #expect(afterwards.header("Transfer-Encoding") == "chunked")
        #expect(test.probe.chunksWritten.load(ordering: .relaxed) == 0, "HEAD does not run a stream's producer")
        await test.stop()
    }

    @Test func rangesAndConditionsOverTheWire() async throws {
        let test = try TestServer.start()
        let whole = try await test.get("/files/ten.bin")
        let tag = try #require(whole.header("ETag"))
        let modified = try #require(whole.header("Last-Modified"))
        #expect(whole.header("Accept-Ranges") == "bytes" && whole.body.count == 10_000)

        let part = try await test.get("/files/ten.bin", "Range: bytes=100-199\r\n")
        #expect(part.status == 206 && part.header("Content-Range") == "bytes 100-199/10000")
        #expect(sameBytes(part.body, whole.body[100..<200]))
        let suffix = try await test.get("/files/ten.bin", "Range: bytes=-5\r\n")
        #expect(suffix.status == 206 && sameBytes(suffix.body, whole.body[9995...]))
        let unsatisfiable = try await test.get("/files/ten.bin", "Range: bytes=20000-\r\n")
        #expect(unsatisfiable.status == 416 && unsatisfiable.header("Content-Range") == "bytes */10000")
        let several = try await test.get("/files/ten.bin", "Range: bytes=0-1,5-6\r\n")
        #expect(several.status == 200 && several.body.count == 10_000)
        let staleRange = try await test.get("/files/ten.bin", "Range: bytes=0-9\r\nIf-Range: \"old\"\r\n")
        #expect(staleRange.status == 200)
        let freshRange = try await test.get("/files/ten.bin", "Range: bytes=0-9\r\nIf-Range: \(tag)\r\n")
        #expect(freshRange.status == 206 && freshRange.body.count == 10)

        let notModified = try await test.get("/files/ten.bin", "If-None-Match: \(tag)\r\n")
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.header("ETag") == tag)
        let sinceModified = try await test.get("/files/ten.bin", "If-Modified-Since: \(modified)\r\n")
        #expect(sinceModified.status == 304)
        let changed = try await test.get("/files/ten.bin", "If-None-Match: \"other\"\r\n")
        #expect(changed.status == 200)
        let precondition = try await test.get("/files/ten.bin", "If-Match: \"other\"\r\n")
        #expect(precondition.status == 412)
        await test.stop()
    }

    @Test func streamsAreChunkedOnHTTP11AndCloseDelimitedOnHTTP10() async throws {
        let test = try TestServer.start()
        let chunked = try await test.get("/stream/3")
        #expect(chunked.header("Transfer-Encoding") == "chunked" && chunked.header("Content-Length") == nil)
        #expect(sameBytes(chunked.body, (0..<3).flatMap(TestServer.chunk)))
        let sequence = try await test.get("/sequence")
        #expect(sequence.text == "one two three")

        let port = test.port
        let (http10, closed) = try await runBlocking { () -> (RawHTTPResponse, Bool) in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /stream/2 HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nConnection: keep-alive\r\n\r\n")
            let response = try connection.readResponse()
            return (response, connection.isClosedByPeer())
        }
        #expect(http10.header("Transfer-Encoding") == nil && http10.header("Connection") == "close")
        #expect(sameBytes(http10.body, (0..<2).flatMap(TestServer.chunk)) && closed)
        await test.stop()
    }

    @Test func fileRegionsInAStreamAreSentBetweenItsBytes() async throws {
        let test = try TestServer.start()
        let ten = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
        let expected = Array("head|".utf8) + ten[100..<4_100] + Array("|middle|".utf8) + ten[9_000..<10_000]
        let chunked = try await test.get("/mixed")
        #expect(chunked.status == 200 && chunked.header("Transfer-Encoding") == "chunked")
        #expect(sameBytes(chunked.body, expected))
        // A declared length is kept: the last region is cut where the length ends.
        let cut = try await test.get("/mixed?length=4500")
        #expect(cut.header("Content-Length") == "4500" && cut.header("Transfer-Encoding") == nil)
        #expect(sameBytes(cut.body, Array(expected.prefix(4_500))))
        let whole = try await test.get("/mixed?length=\(expected.count)")
        #expect(sameBytes(whole.body, expected))
        await test.stop()
    }

    @Test func aStreamWaitsForASlowClient() async throws {
        // Small kernel buffers on both sides, so that what the producer may run ahead is the
        // server's high-water mark (256 KiB) plus about 200 KiB the kernel holds: 7 or 8 chunks.
        let test = try TestServer.start { $0.socketSendBufferSize = 64 * 1024 }
        let port = test.port
        let total = 64  // 4 MiB
        let connection = try RawHTTPConnection(port: port, receiveBufferSize: 4096)
        try connection.send("GET /stream/\(total) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        // Wait until the producer stops (the machine may be busy), then check where it stopped.
        var stalled = -1
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let before = test.probe.chunksWritten.load(ordering: .relaxed)
            try await Task.sleep(for: .milliseconds(300))
            if before > 0 && test.probe.chunksWritten.load(ordering: .relaxed) == before {
                stalled = before
                break
            }
        }
        #expect(
            stalled > 0,
            "the producer never stopped: \(test.probe.chunksWritten.load(ordering: .relaxed)) chunks written in 30 s")
        #expect(stalled <= 10, "the producer ran \(stalled) chunks ahead")
        connection.setReceiveBufferSize(1 << 20)
        let response = try await runBlocking { try connection.readResponse() }
        #expect(response.body.count == total * 65_536)
        #expect(sameBytes(response.body, (0..<total).flatMap(TestServer.chunk)))
        #expect(test.probe.chunksWritten.load(ordering: .relaxed) == total)
        #expect(await test.probe.waitForStreamEnd() == "finished")
        await test.stop()
    }

    @Test func aClientHangingUpEndsTheStreamsProducer() async throws {
        let test = try TestServer.start()
        let port = test.port
        try await runBlocking {
            let connection = try RawHTTPConnection(port: port, receiveBufferSize: 4096)
            try connection.send("GET /stream/100000 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            _ = try connection.readSome(1000)
            connection.reset()
        }
        #expect(await test.probe.waitForStreamEnd() == "\(HTTPServerError.connectionClosed)")
        #expect(await waitForNoConnections(test.server))
        await test.stop()
    }

    @Test func aClientHangingUpCancelsItsHandler() async throws {
        let test = try TestServer.start()
        let port = test.port
        try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /wait HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            usleep(100_000)
            connection.reset()
        }
        #expect(await test.probe.waitForStreamEnd(timeout: .seconds(10)) == "CancellationError")
        await test.stop()
    }

    @Test func aFailingStreamIsCutShortNotCompleted() async throws {
        let test = try TestServer.start()
        let port = test.port
        let raw = try await runBlocking { () -> String in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /broken-stream HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return String(decoding: connection.readToEnd(), as: UTF8.self)
        }
        #expect(raw.contains("7\r\npartial\r\n"))
        #expect(!raw.hasSuffix("0\r\n\r\n"), "no last chunk: the client can tell the body is incomplete")
        await test.stop()
    }

    @Test func handlerErrorsBecomeStatuses() async throws {
        let test = try TestServer.start()
        let teapot = try await test.get("/teapot")
        #expect(teapot.status == 418 && teapot.text.contains("short and stout"))
        #expect(try await test.get("/crash").status == 500)
        let wrongMethod = try await test.exchange("PUT /hello HTTP/1.1\r\nHost: 127.0.0.1:\(test.port)\r\n\r\n")
        #expect(wrongMethod.status == 405 && wrongMethod.header("Allow") == "GET, HEAD")
        let injected = try await test.get("/inject")
        #expect(injected.header("X-Good") == "yes" && injected.header("X-Bad") == nil)
        #expect(injected.header("Set-Cookie") == nil)
        await test.stop()
    }

    @Test func requestBodiesArriveWithContentLengthChunkedAndExpectContinue() async throws {
        let test = try TestServer.start { $0.accessToken = "t0ken" }
        let port = test.port
        let plain = try await test.exchange(
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-StreamKit-Token: t0ken\r\nContent-Length: 5\r\n\r\nhello"
        )
        #expect(plain.status == 200 && plain.text == "hello")
        let chunked = try await test.exchange(
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer t0ken\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n")
        #expect(chunked.text == "abcde")
        let continued = try await runBlocking { () -> (RawHTTPResponse, RawHTTPResponse) in
            let connection = try RawHTTPConnection(port: port)
            try connection.send(
                "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-StreamKit-Token: t0ken\r\n"
                    + "Expect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            let interim = try connection.readResponse()
            try connection.send("data")
            return (interim, try connection.readResponse())
        }
        #expect(continued.0.status == 100)
        #expect(continued.1.status == 200 && continued.1.text == "data")
        let tooLarge = try await test.exchange(
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-StreamKit-Token: t0ken\r\nContent-Length: 2000000\r\n\r\n"
        )
        #expect(tooLarge.status == 413 && tooLarge.header("Connection") == "close")
        await test.stop()
    }

    @Test func malformedAndOversizedRequestsAreAnsweredThenClosed() async throws {
        let test = try TestServer.start()
        let port = test.port
        let cases: [(String, Int)] = [
            ("GARBAGE\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nBad Header: x\r\n\r\n", 400),
            ("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX: \(String(repeating: "v", count: 17_000))\r\n\r\n", 431),
            ("GET / HTTP/2.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 505),
            ("POST /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ]
        for (text, status) in cases {
            let (response, closed) = try await runBlocking { () -> (RawHTTPResponse, Bool) in
                let connection = try RawHTTPConnection(port: port)
                try connection.send(text)
                let response = try connection.readResponse()
                return (response, connection.isClosedByPeer())
            }
            #expect(response.status == status, "\(text.prefix(40))")
            #expect(response.header("Connection") == "close" && closed, "\(text.prefix(40))")
        }
        // The server is still there.
        #expect(try await test.get("/hello").status == 200)
        await test.stop()
    }

    @Test func theHostMustNameThisServer() async throws {
        let test = try TestServer.start { $0.hostNames = ["media.local"] }
        let port = test.port
        for host in ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "media.local:\(port)"] {
            let response = try await test.exchange("GET /hello HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            #expect(response.status == 200, "\(host)")
        }
        for host in ["evil.example:\(port)", "127.0.0.1:\(port &+ 1)", "localhost", "attacker.localhost:\(port)"] {
            let response = try await test.exchange("GET /hello HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            #expect(response.status == 421, "\(host)")
        }
        // HTTP/1.0 without Host, and an absolute target naming another host, are refused too.
        #expect(try await test.exchange("GET /hello HTTP/1.0\r\n\r\n").status == 421)
        let absolute = try await test.exchange(
            "GET http://evil.example:\(port)/hello HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(absolute.status == 421)
        let absoluteOwn = try await test.exchange(
            "GET http://localhost:\(port)/hello HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        #expect(absoluteOwn.status == 200)
        await test.stop()
    }

    @Test func corsIsOffUnlessAnOriginIsAllowed() async throws {
        let closed = try TestServer.start()
        let withoutCORS = try await closed.get("/hello", "Origin: http://player.example\r\n")
        #expect(withoutCORS.status == 200 && withoutCORS.header("Access-Control-Allow-Origin") == nil)
        await closed.stop()

        let open = try TestServer.start { $0.allowedOrigins = ["http://player.example:8080"] }
        let allowed = try await open.get("/files/ten.bin", "Origin: http://player.example:8080\r\n")
        #expect(allowed.header("Access-Control-Allow-Origin") == "http://player.example:8080")
        #expect(allowed.header("Vary") == "Origin")
        #expect(allowed.header("Access-Control-Expose-Headers")?.contains("Content-Range") == true)
        let other = try await open.get("/hello", "Origin: http://evil.example\r\n")
        #expect(other.header("Access-Control-Allow-Origin") == nil)
        let preflight = try await open.exchange(
            "OPTIONS /files/ten.bin HTTP/1.1\r\nHost: 127.0.0.1:\(open.port)\r\nOrigin: http://player.example:8080\r\n"
                + "Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: range\r\n\r\n")
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "http://player.example:8080")
        #expect(preflight.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
        #expect(preflight.header("Access-Control-Allow-Headers") == "range")
        let refusedPreflight = try await open.exchange(
            "OPTIONS /files/ten.bin HTTP/1.1\r\nHost: 127.0.0.1:\(open.port)\r\nOrigin: http://evil.example\r\n"
                + "Access-Control-Request-Method: GET\r\n\r\n")
        #expect(refusedPreflight.header("Access-Control-Allow-Origin") == nil)
        #expect(refusedPreflight.header("Access-Control-Allow-Methods") == nil)
        await open.stop()
    }

    @Test func stateChangingRoutesNeedTheToken() async throws {
        let test = try TestServer.start()
        let token = test.server.accessToken
        func post(_ fields: String) async throws -> Int { try await test.postStatus(fields) }
        #expect(try await post("") == 401)
        #expect(try await post("X-StreamKit-Token: wrong\r\n") == 401)
        #expect(try await post("Authorization: Bearer \(token.dropLast())\r\n") == 401)
        #expect(try await post("Authorization: Bearer \(token)\r\n") == 200)
        #expect(try await post("X-StreamKit-Token: \(token)\r\n") == 200)
        #expect(test.probe.requests.load(ordering: .relaxed) == 2, "refused requests never reach the handler")
        let unauthorized = try await test.get("/private")
        #expect(unauthorized.status == 401 && unauthorized.header("WWW-Authenticate") == "Bearer realm=\"streamkit\"")
        #expect(try await test.get("/private", "Authorization: Bearer \(token)\r\n").status == 200)
        await test.stop()
    }

    @Test func connectionsBeyondTheLimitGet503WhenNoneIsIdle() async throws {
        let test = try TestServer.start { $0.maximumConnections = 3 }
        let port = test.port
        // Each waits for its handler: busy, so none may be closed for a new connection.
        let held = try (0..<3).map { _ in
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET /slow/1000 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return connection
        }
        #expect(await eventually { test.probe.slowStarted.load(ordering: .relaxed) == 3 })
        let refused = try await runBlocking { () -> RawHTTPResponse in
            let connection = try RawHTTPConnection(port: port)
            try? connection.send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return try connection.readResponse()
        }
        #expect(refused.status == 503)
        let answered = try await runBlocking { try held.map { try $0.readResponse().status } }
        #expect(answered == [200, 200, 200])
        await test.stop()
    }

    @Test func idleAndSlowConnectionsAreClosedOnTime() async throws {
        let test = try TestServer.start {
            $0.idleTimeout = .milliseconds(300)
            $0.requestTimeout = .milliseconds(600)
        }
        let port = test.port
        let results = try await runBlocking { () -> (Bool, RawHTTPResponse, Bool) in
            let idle = try RawHTTPConnection(port: port)
            let slow = try RawHTTPConnection(port: port)
            try slow.send("GET /hello HTTP/1.1\r\nHost: 12")
            let started = ContinuousClock.now
            let idleClosed = idle.isClosedByPeer(within: .seconds(3))
            let elapsed = ContinuousClock.now - started
            let timeout = try slow.readResponse()
            return (idleClosed && elapsed < .seconds(2), timeout, slow.isClosedByPeer())
        }
        #expect(results.0, "the idle connection was closed")
        #expect(results.1.status == 408 && results.2)
        #expect(await waitForNoConnections(test.server))
        await test.stop()
    }

    @Test func aClientThatStopsReadingIsAbandonedAfterTheSendTimeout() async throws {
        // A small kernel buffer, so that the kernel cannot keep taking bytes (and so count as
        // progress) as its buffer grows.
        let test = try TestServer.start {
            $0.sendTimeout = .milliseconds(300)
            $0.socketSendBufferSize = 64 * 1024
        }
        let port = test.port
        let connection = try RawHTTPConnection(port: port, receiveBufferSize: 4096)
        try connection.send("GET /stream/200 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await waitForNoConnections(test.server, timeout: .seconds(30)))
        let ended = await test.probe.waitForStreamEnd(timeout: .seconds(30))
        #expect(ended == "\(HTTPServerError.connectionClosed)")
        #expect(test.probe.chunksWritten.load(ordering: .relaxed) < 200)
        await test.stop()
    }

    @Test func shutdownFinishesResponsesInFlightAndRefusesNewConnections() async throws {
        let test = try TestServer.start()
        let port = test.port
        let idle = try RawHTTPConnection(port: port)
        let busy = try RawHTTPConnection(port: port)
        try busy.send("GET /slow/400 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(
            await eventually {
                test.probe.slowStarted.load(ordering: .relaxed) == 1 && test.server.connectionCount == 2
            })
        let started = ContinuousClock.now
        // A grace period far longer than the bound below, so that a test process held up for
        // seconds still tells "stopped after the last response" from "waited for the deadline".
        test.server.beginShutdown(gracePeriod: .seconds(120))
        #expect(await LocalNetwork.waitUntilStoppedListening(port: port))
        let (response, idleClosed, busyClosed) = try await runBlocking {
            (try busy.readResponse(), idle.isClosedByPeer(within: .seconds(1)), busy.isClosedByPeer())
        }
        #expect(response.status == 200 && response.text == "slept 400\n")
        #expect(response.header("Connection") == "close", "the pipelined request is not answered")
        #expect(idleClosed && busyClosed)
        await test.server.waitUntilStopped()
        #expect(ContinuousClock.now - started < .seconds(60), "stopped when the last response was done")
    }

    @Test func shutdownClosesWhatIsLeftAtTheDeadline() async throws {
        let test = try TestServer.start()
        let port = test.port
        let connection = try RawHTTPConnection(port: port)
        // A handler of 60 s against a bound of 30 s: a test process held up for seconds still tells
        // "closed at the deadline" from "waited for the handler".
        try connection.send("GET /slow/60000 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await eventually { test.probe.slowStarted.load(ordering: .relaxed) == 1 })
        let started = ContinuousClock.now
        await test.server.shutdown(gracePeriod: .milliseconds(200))
        #expect(ContinuousClock.now - started < .seconds(30), "the 60-second handler was not waited for")
        #expect(try await runBlocking { connection.isClosedByPeer() })
    }
}

/// Waits until the server has no connection open.
func waitForNoConnections(_ server: HTTPServer, timeout: Duration = .seconds(5)) async -> Bool {
    await waitForConnections(server, count: 0, timeout: timeout)
}

/// Waits until the server has exactly `count` connections open.
func waitForConnections(_ server: HTTPServer, count: Int, timeout: Duration = .seconds(30)) async -> Bool {
    await eventually(timeout: timeout, interval: .milliseconds(5)) { server.connectionCount == count }
}
