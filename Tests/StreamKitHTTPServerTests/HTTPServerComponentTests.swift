import Foundation
import StreamKitCore
import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPServer

@Suite struct HTTPRouterTests {
    private func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/") { _ in .text("root") }
        router.get("/library/:id/*path") { _ in .text("file") }
        router.get("/items/:id") { _ in .text("item") }
        router.delete("/items/:id") { _ in .text("deleted") }
        router.get("/private", requiresToken: true) { _ in .text("private") }
        return router
    }

    private func parameters(_ match: HTTPRouter.Match) -> [String]? {
        guard case .route(_, let parameters) = match else { return nil }
        return parameters.map { "\($0.name)=\($0.value)" }
    }

    @Test func patternsCaptureSegmentsAndTheRest() {
        let router = router()
        #expect(parameters(router.match(method: .get, path: "/")) == [])
        #expect(
            parameters(router.match(method: .get, path: "/library/abc/v1/seg%2F0.ts")) == [
                "id=abc", "path=v1/seg%2F0.ts",
            ])
        #expect(parameters(router.match(method: .get, path: "/library/abc/")) == ["id=abc", "path="])
        #expect(parameters(router.match(method: .get, path: "/items/7")) == ["id=7"])
    }

    @Test func unknownPathsAre404AndOtherMethods405WithAllow() {
        let router = router()
        guard case .notFound = router.match(method: .get, path: "/nope") else {
            Issue.record("expected 404")
            return
        }
        guard case .notFound = router.match(method: .get, path: "/items//") else {
            Issue.record("an empty parameter does not match")
            return
        }
        guard case .methodNotAllowed(let allowed) = router.match(method: .put, path: "/items/7") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == [.get, .delete, .head])
        #expect(router.methods(forPath: "/items/7") == [.get, .delete, .head])
    }

    @Test func headFallsBackToGet() {
        guard case .route(let route, _) = router().match(method: .head, path: "/items/1") else {
            Issue.record("HEAD did not match the GET route")
            return
        }
        #expect(route.method == .get)
    }

    @Test func stateChangingRoutesAlwaysRequireTheToken() {
        let router = router()
        func requires(_ method: HTTPMethod, _ path: String) -> Bool? {
            guard case .route(let route, _) = router.match(method: method, path: path) else { return nil }
            return route.requiresToken
        }
        #expect(requires(.delete, "/items/1") == true)
        #expect(requires(.get, "/items/1") == false)
        #expect(requires(.get, "/private") == true)
        var explicit = HTTPRouter()
        explicit.add(.post, "/x", requiresToken: false) { _ in .text("") }
        guard case .route(let route, _) = explicit.match(method: .post, path: "/x") else { return }
        #expect(route.requiresToken, "a POST cannot opt out")
    }

    @Test func theFirstMatchingRouteWins() {
        var router = HTTPRouter()
        router.get("/a/:x") { _ in .text("param") }
        router.get("/a/b") { _ in .text("literal") }
        guard case .route(let route, _) = router.match(method: .get, path: "/a/b") else { return }
        #expect(route.pattern.description == "/a/:x")
    }

    @Test func requestAccessors() {
        let request = HTTPServerRequest(
            head: HTTPServerRequestHead(method: .get, target: "/proxy/file?url=http%3A%2F%2Fa%2Fb%20c&x=1+2&bad=%zz"),
            rawRouteParameters: [("id", "a%20b"), ("bad", "%ff")])
        #expect(request.path == "/proxy/file")
        #expect(request.queryValue("url") == "http://a/b c")
        #expect(request.queryValue("x") == "1 2")
        #expect(request.queryValue("bad") == nil)
        #expect(request.routeParameter("id") == "a b")
        #expect(request.rawRouteParameter("id") == "a%20b")
        #expect(request.routeParameter("bad") == nil, "not UTF-8 once decoded")
    }
}

@Suite struct HTTPServedPathTests {
    private func resolve(_ raw: String) -> String {
        switch HTTPServedPath.relativePath(ofRawPath: raw) {
        case .success(let path): "ok:" + path
        case .failure(let error): "\(error.status.rawValue)"
        }
    }

    @Test(arguments: [
        ("a/b.ts", "ok:a/b.ts"),
        ("/a//b.ts/", "ok:a/b.ts"),
        ("a%20b/c%C3%A9.ts", "ok:a b/cé.ts"),
        ("a%2Fb", "ok:a/b"),
        ("", "404"),
        ("//", "404"),
        ("a/../b", "403"),
        ("a/%2e%2e/b", "403"),
        ("a/%2E%2E%2Fb", "403"),
        ("..%2f", "403"),
        ("a/./b", "404"),
        ("a/.hidden", "404"),
        ("a/%2ehidden", "404"),
        ("a/%252e%252e/b", "400"),
        ("a%5cb", "400"),
        ("a\\b", "400"),
        ("a%00b", "400"),
        ("a%0ab", "400"),
        ("a%7fb", "400"),
        ("a%c0%ae", "400"),
        ("a%zz", "400"),
        ("a%2", "400"),
    ])
    func pathsAreNormalizedOrRefused(raw: String, expected: String) {
        #expect(resolve(raw) == expected)
    }
}

@Suite struct HTTPConditionalRequestTests {
    let validators = HTTPFileValidators(
        length: 1000, entityTag: EntityTag(opaqueTag: "v1"), lastModified: 1_700_000_000)
    let lastModified = HTTPDate.format(Date(timeIntervalSince1970: 1_700_000_000))
    let earlier = HTTPDate.format(Date(timeIntervalSince1970: 1_600_000_000))

    private func evaluate(_ fields: [(String, String)], method: HTTPMethod = .get) -> HTTPConditionalRequest.Selection {
        HTTPConditionalRequest.evaluate(method: method, headers: HTTPHeaders(fields), validators: validators)
    }

    @Test func validatorsAnswer304And412() {
        #expect(evaluate([]) == .whole)
        #expect(evaluate([("If-None-Match", "\"v0\", W/\"v1\"")]) == .notModified)
        #expect(evaluate([("If-None-Match", "*")], method: .head) == .notModified)
        #expect(evaluate([("If-None-Match", "\"v0\"")]) == .whole)
        #expect(evaluate([("If-Modified-Since", lastModified)]) == .notModified)
        #expect(evaluate([("If-Modified-Since", earlier)]) == .whole)
        #expect(evaluate([("If-Modified-Since", "yesterday")]) == .whole)
        // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
        #expect(evaluate([("If-None-Match", "\"v0\""), ("If-Modified-Since", lastModified)]) == .whole)
        #expect(evaluate([("If-Match", "\"v0\"")]) == .preconditionFailed)
        #expect(evaluate([("If-Match", "W/\"v1\"")]) == .preconditionFailed, "If-Match compares strongly")
        #expect(evaluate([("If-Match", "\"v1\"")]) == .whole)
        #expect(evaluate([("If-Unmodified-Since", earlier)]) == .preconditionFailed)
    }

    @Test func rangesAnswer206Or416OrTheWholeFile() {
        #expect(evaluate([("Range", "bytes=0-99")]) == .part(ByteRange(0, 100)))
        #expect(evaluate([("Range", "bytes=-10")]) == .part(ByteRange(990, 1000)))
        #expect(evaluate([("Range", "bytes=900-5000")]) == .part(ByteRange(900, 1000)))
        #expect(evaluate([("Range", "bytes=1000-")]) == .unsatisfiable)
        #expect(evaluate([("Range", "bytes=0-1,5-6")]) == .whole, "several ranges: the whole file")
        #expect(evaluate([("Range", "lines=1-2")]) == .whole, "an unknown unit is ignored")
        #expect(evaluate([("Range", "bytes=0-99")], method: .head) == .whole, "Range is defined for GET only")
        #expect(evaluate([("Range", "bytes=0-99"), ("If-Range", "\"v1\"")]) == .part(ByteRange(0, 100)))
        #expect(evaluate([("Range", "bytes=0-99"), ("If-Range", "\"v0\"")]) == .whole)
        #expect(evaluate([("Range", "bytes=0-99"), ("If-Range", "W/\"v1\"")]) == .whole)
        #expect(evaluate([("Range", "bytes=0-99"), ("If-Range", lastModified)]) == .part(ByteRange(0, 100)))
        #expect(evaluate([("Range", "bytes=0-99"), ("If-Range", earlier)]) == .whole)
    }

    /// A resource with no modification date (a proxied one whose origin sent no Last-Modified):
    /// date conditions are ignored (RFC 9110 §13.1.3–4); a date in If-Range never matches.
    @Test func withoutADateDateConditionsAreIgnored() {
        let undated = HTTPFileValidators(length: 1000, entityTag: EntityTag(opaqueTag: "v1"), lastModified: 0)
        func evaluate(_ fields: [(String, String)]) -> HTTPConditionalRequest.Selection {
            HTTPConditionalRequest.evaluate(method: .get, headers: HTTPHeaders(fields), validators: undated)
        }
        #expect(evaluate([("If-Modified-Since", earlier)]) == .whole)
        #expect(evaluate([("If-Unmodified-Since", earlier)]) == .whole)
        #expect(evaluate([("Range", "bytes=0-99"), ("If-Range", earlier)]) == .whole)
        #expect(evaluate([("If-None-Match", "\"v1\"")]) == .notModified, "the entity tag still answers")
    }
}

@Suite struct HTTPServerPartsTests {
    @Test(arguments: [
        ("index.m3u8", "application/vnd.apple.mpegurl"), ("SEG.TS", "video/mp2t"), ("a.m4s", "video/iso.segment"),
        ("init.mp4", "video/mp4"), ("a.aac", "audio/aac"), ("a.mp3", "audio/mpeg"), ("a.m4a", "audio/mp4"),
        ("subs.vtt", "text/vtt; charset=utf-8"), ("k.key", "application/octet-stream"),
        ("noextension", "application/octet-stream"), (".m3u8", "application/octet-stream"),
    ])
    func mediaTypes(name: String, type: String) {
        #expect(HTTPMediaTypes.forFile(named: name) == type)
    }

    @Test func hostPolicyAcceptsOnlyTheServersOwnNames() {
        let loopback = HTTPHostPolicy(
            listening: ServerSocket.Address("127.0.0.1")!, port: 8080, hostNames: ["Media.Local"])
        for host in [
            "127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "localhost.:8080", "[::1]:8080", "media.local:8080",
        ] {
            #expect(loopback.allows(host), "\(host)")
        }
        for host in [
            "evil.example:8080", "127.0.0.1:8081", "127.0.0.1", "localhost", "", ":8080", "127.0.0.1:", "[::1]",
            "127.0.0.1:8080:1", "user@127.0.0.1:8080", "192.168.1.5:8080", "[::2]:8080", "127.0.0.1 :8080",
            "127.0.0.1:08080x", "localhost.evil.example:8080",
        ] {
            #expect(!loopback.allows(host), "\(host)")
        }
        let wildcard = HTTPHostPolicy(listening: ServerSocket.Address("0.0.0.0")!, port: 80, hostNames: [])
        #expect(wildcard.allows("192.168.1.5") && wildcard.allows("[fe80::1]:80") && wildcard.allows("localhost"))
        #expect(!wildcard.allows("evil.example"))
        let specific = HTTPHostPolicy(listening: ServerSocket.Address("192.168.1.5")!, port: 9, hostNames: [])
        #expect(
            specific.allows("192.168.1.5:9") && !specific.allows("192.168.1.6:9") && !specific.allows("localhost:9"))
    }

    @Test func addresses() {
        #expect(ServerSocket.Address("localhost")?.text == "127.0.0.1")
        #expect(ServerSocket.Address("[::1]")?.isLoopback == true)
        #expect(ServerSocket.Address("::")?.isWildcard == true)
        #expect(ServerSocket.Address("127.0.0.2")?.isLoopback == true)
        #expect(ServerSocket.Address("10.0.0.1")?.isLoopback == false)
        #expect(ServerSocket.Address("example.com") == nil)
        #expect(HTTPServerConfiguration.isValidHost("::1") && !HTTPServerConfiguration.isValidHost("1.2.3"))
    }

    @Test func responseHeadsFrameBodiesAndDropUnsafeFields() {
        var bytes: [UInt8] = []
        HTTPResponseHeadEncoder.encode(
            status: .partialContent,
            headers: [
                "Content-Type": "video/mp2t", "Content-Length": "5", "X-Split": "a\r\nSet-Cookie: x=1", "Bad Name": "v",
                "connection": "keep-alive",
            ],
            framing: .length(100), keepAlive: false, announceKeepAlive: false, date: "Sun, 06 Nov 1994 08:49:37 GMT",
            serverName: "StreamKit", extraHeaders: [("Vary", "Origin")], into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "HTTP/1.1 206 Partial Content\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: StreamKit\r\n"
                + "Content-Type: video/mp2t\r\nVary: Origin\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
        bytes = []
        HTTPResponseHeadEncoder.encode(
            status: .ok, headers: [:], framing: .chunked, keepAlive: true, announceKeepAlive: true, date: "D",
            serverName: nil, extraHeaders: [], into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nDate: D\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n")
    }

    @Test func datesFormatWithoutAFormatter() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 253_402_300_799)) == "Fri, 31 Dec 9999 23:59:59 GMT")
    }

    @Test func entityTagsChangeWithEveryValidator() {
        let tag = HTTPStaticFileResponder.entityTag(inode: 0x2A, size: 4096, modified: 1_700_000_000_123_456_789)
        #expect(tag.headerValue == "\"2a-1000-17979cfe3d85cd15\"")
        #expect(!tag.isWeak)
        #expect(HTTPStaticFileResponder.entityTag(inode: 0, size: 0, modified: 0).headerValue == "\"0-0-0\"")
    }

    @Test func tokensAre128RandomBits() {
        let first = HTTPServer.randomToken()
        #expect(first.count == 32 && first.allSatisfy(\.isHexDigit))
        #expect(HTTPServer.randomToken() != first)
    }
}
