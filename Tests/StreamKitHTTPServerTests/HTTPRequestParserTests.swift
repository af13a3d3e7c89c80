import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitTestSupport
import Testing

/// Feeds the same bytes in different pieces and collects what the parser reads, for
/// ``DecoderVerifier`` (one byte at a time, all at once, random splits).
enum ParserDrip {
    /// What parsing produced: events with adjacent body pieces joined, and the error if any.
    struct Outcome: Equatable, CustomStringConvertible {
        var events: [HTTPRequestParser.Event]
        var error: HTTPRequestParseError?

        var description: String {
            "\(events.map { "\($0)".prefix(120) }) error: \(error.map { "\($0)" } ?? "none")"
        }
    }

    static func parse(_ pieces: [ArraySlice<UInt8>], limits: HTTPRequestParser.Limits = .init()) -> Outcome {
        var parser = HTTPRequestParser(limits: limits)
        var outcome = Outcome(events: [], error: nil)
        func drain() -> Bool {
            while true {
                do {
                    guard let event = try parser.next() else { return true }
                    if case .body(let more) = event, case .body(let earlier)? = outcome.events.last {
                        outcome.events[outcome.events.count - 1] = .body(earlier + more)
                    } else {
                        outcome.events.append(event)
                    }
                } catch {
                    outcome.error = error
                    return false
                }
            }
        }
        for piece in pieces {
            parser.feed(piece)
            if !drain() { break }
        }
        if pieces.isEmpty { _ = drain() }
        return outcome
    }

    /// Parses `bytes` whole, a byte at a time, and in `randomRuns` random splits; all must agree.
    static func verify(
        _ bytes: [UInt8], limits: HTTPRequestParser.Limits = .init(), randomRuns: Int = 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        DecoderVerifier.verify(bytes, randomRuns: randomRuns, sourceLocation: sourceLocation) {
            parse($0, limits: limits)
        }
    }
}

@Suite struct HTTPRequestParserTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func head(
        _ method: HTTPMethod, _ target: String, _ headers: [(String, String)],
        version: HTTPServerRequestHead.Version = .http11
    ) -> HTTPRequestParser.Event {
        .head(HTTPServerRequestHead(method: method, target: target, version: version, headers: HTTPHeaders(headers)))
    }

    @Test func readsAGetWithHeadersInAnyPieces() {
        let outcome = ParserDrip.verify(
            bytes(
                "GET /library/a/index.m3u8?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nRange:  bytes=0-99 \r\nX-Empty:\r\n\r\n"
            ))
        #expect(outcome.error == nil)
        #expect(
            outcome.events == [
                head(
                    .get, "/library/a/index.m3u8?x=1",
                    [("Host", "127.0.0.1:8080"), ("Range", "bytes=0-99"), ("X-Empty", "")]),
                .end,
            ])
    }

    @Test func readsPipelinedRequestsWithBodiesInOrder() {
        let text =
            "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
            + "GET /b HTTP/1.1\r\nHost: h\r\n\r\n"
            + "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "4;name=value\r\nwiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: t\r\n\r\n"
            + "\r\nDELETE /d HTTP/1.0\r\n\r\n"
        let outcome = ParserDrip.verify(bytes(text))
        #expect(outcome.error == nil)
        #expect(
            outcome.events == [
                head(.post, "/a", [("Host", "h"), ("Content-Length", "5")]), .body(bytes("hello")), .end,
                head(.get, "/b", [("Host", "h")]), .end,
                head(.put, "/c", [("Host", "h"), ("Transfer-Encoding", "chunked")]),
                .body(bytes("wikipedia in\r\n\r\nchunks.")), .end,
                head(.delete, "/d", [], version: .http10), .end,
            ])
    }

    @Test func acceptsBareLineFeedsAndLeadingEmptyLines() {
        let outcome = ParserDrip.verify(bytes("\r\n\nGET / HTTP/1.1\nHost: h\n\n"))
        #expect(outcome.events == [head(.get, "/", [("Host", "h")]), .end])
    }

    @Test func absoluteAndAsteriskForms() {
        let outcome = ParserDrip.verify(
            bytes("GET http://127.0.0.1:9/a/b?q HTTP/1.1\r\nHost: x\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(outcome.error == nil)
        guard case .head(let absolute) = outcome.events.first else {
            Issue.record("no head")
            return
        }
        #expect(absolute.path == "/a/b" && absolute.query == "q" && absolute.targetAuthority == "127.0.0.1:9")
        #expect(outcome.events.count == 4)
    }

    @Test func aHigherMinorVersionIsReadAsHTTP11() {
        let outcome = ParserDrip.verify(bytes("GET / HTTP/1.7\r\nHost: h\r\n\r\n"))
        #expect(outcome.events == [head(.get, "/", [("Host", "h")]), .end])
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\nBad\rValue: x\r\n\r\n", 400),  // bare CR
        ("GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400),  // space before colon
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n", 400),  // obsolete folding
        ("GET / HTTP/1.1\r\n\r\n", 400),  // no Host
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n200000\r\n", 413),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505),
        ("GET / HTTP/0.9\r\nHost: h\r\n\r\n", 505),
        ("GET / HTTP/1.1x\r\nHost: h\r\n\r\n", 400),
        ("GET / http/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET /  HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET /a\u{7F}b HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET /é HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET relative HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: h\r\n: novalue\r\n\r\n", 400),
        ("GET\r\n\r\n", 400),
    ])
    func rejectsMalformedRequestsWithTheirStatus(text: String, status: Int) {
        let outcome = ParserDrip.verify(bytes(text))
        #expect(outcome.error?.status.rawValue == status, "\(outcome)")
    }

    @Test func theRequestLineLimitIs8KiBAnd414Beyond() {
        let fits = "GET /" + String(repeating: "a", count: 8192 - 14) + " HTTP/1.1"
        #expect(fits.utf8.count == 8192)
        #expect(ParserDrip.verify(bytes(fits + "\r\nHost: h\r\n\r\n"), randomRuns: 3).error == nil)
        let tooLong = "GET /" + String(repeating: "a", count: 8192 - 13) + " HTTP/1.1"
        let outcome = ParserDrip.verify(bytes(tooLong + "\r\nHost: h\r\n\r\n"), randomRuns: 3)
        #expect(outcome.error == .requestLineTooLong(limit: 8192))
        #expect(outcome.error?.status == .uriTooLong)
    }

    @Test func anEndlessRequestLineFailsBeforeItEnds() {
        var parser = HTTPRequestParser()
        parser.feed(Array(repeating: UInt8(ascii: "a"), count: 8200))
        #expect(throws: HTTPRequestParseError.requestLineTooLong(limit: 8192)) { try parser.next() }
        // A failed parser stays failed.
        parser.feed(bytes("\r\n"))
        #expect(throws: HTTPRequestParseError.requestLineTooLong(limit: 8192)) { try parser.next() }
    }

    @Test func theHeaderSectionLimitIs16KiBAnd431Beyond() {
        func request(headerBytes: Int) -> [UInt8] {
            // "Host: h\r\n" is 9 bytes, the final "\r\n" 2, each "X: value\r\n" line 5 + value.
            var text = "GET / HTTP/1.1\r\nHost: h\r\n"
            var remaining = headerBytes - 9 - 2
            var index = 0
            while remaining > 0 {
                let length = min(1000, remaining)
                let name = "X\(index % 10)"
                let valueLength = length - name.count - 4
                text += "\(name): " + String(repeating: "v", count: valueLength) + "\r\n"
                remaining -= length
                index += 1
            }
            return bytes(text + "\r\n")
        }
        #expect(ParserDrip.verify(request(headerBytes: 16 * 1024), randomRuns: 3).error == nil)
        let outcome = ParserDrip.verify(request(headerBytes: 16 * 1024 + 1), randomRuns: 3)
        #expect(outcome.error?.status == .requestHeaderFieldsTooLarge, "\(outcome)")
    }

    @Test func moreThan100FieldsIs431() {
        let fields = (0..<100).map { "F\($0): x\r\n" }.joined()
        #expect(
            ParserDrip.verify(bytes("GET / HTTP/1.1\r\n" + fields + "\r\n"), randomRuns: 2).error?.status.rawValue
                == 400)
        let many = (0..<101).map { "F\($0): x\r\n" }.joined()
        let outcome = ParserDrip.verify(bytes("GET / HTTP/1.1\r\nHost: h\r\n" + many + "\r\n"), randomRuns: 2)
        #expect(outcome.error == .tooManyHeaderFields(limit: 100))
    }

    @Test func limitsAreConfigurable() {
        let limits = HTTPRequestParser.Limits(
            maximumRequestLineLength: 20, maximumHeaderSectionLength: 30, maximumHeaderFieldCount: 2,
            maximumBodyLength: 4)
        #expect(
            ParserDrip.verify(bytes("GET /123456789012 HTTP/1.1\r\nHost: h\r\n\r\n"), limits: limits).error?.status
                == .uriTooLong)
        #expect(
            ParserDrip.verify(bytes("GET / HTTP/1.1\r\nHost: h\r\nX: 1\r\nY: 2\r\n\r\n"), limits: limits).error
                == .tooManyHeaderFields(limit: 2))
        #expect(
            ParserDrip.verify(bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"), limits: limits)
                .error
                == .bodyTooLarge(limit: 4))
        #expect(
            ParserDrip.verify(bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nhell"), limits: limits)
                .error
                == nil)
    }

    @Test func tracksWhetherARequestIsInProgress() throws {
        var parser = HTTPRequestParser()
        #expect(parser.isIdle && !parser.isInsideRequest)
        parser.feed(bytes("GET / HT"))
        #expect(try parser.next() == nil)
        #expect(parser.isInsideRequest && !parser.isIdle)
        parser.feed(bytes("TP/1.1\r\nHost: h\r\n\r\nGET /next"))
        guard case .head = try parser.next() else {
            Issue.record("no head")
            return
        }
        #expect(try parser.next() == .end)
        #expect(parser.bufferedByteCount == 9 && parser.isInsideRequest)
    }

    @Test func keepAliveAndContinueFollowTheVersionAndFields() {
        func head(_ version: HTTPServerRequestHead.Version, _ fields: [(String, String)]) -> HTTPServerRequestHead {
            HTTPServerRequestHead(method: .get, target: "/", version: version, headers: HTTPHeaders(fields))
        }
        #expect(head(.http11, []).keepAlive)
        #expect(!head(.http11, [("Connection", "Close")]).keepAlive)
        #expect(!head(.http11, [("Connection", "keep-alive, close")]).keepAlive)
        #expect(!head(.http10, []).keepAlive)
        #expect(head(.http10, [("Connection", "Keep-Alive")]).keepAlive)
        #expect(head(.http11, [("Expect", "100-continue")]).expectsContinue)
        #expect(!head(.http10, [("Expect", "100-continue")]).expectsContinue)
    }
}
