import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPClient

@Suite struct ResponseHeadParserTests {
    private func feed(
        _ lines: [String], into parser: inout HTTPClientResponseHeadParser
    ) -> [HTTPClientResponseHeadParser.LineResult] {
        lines.map { parser.feed(line: Array($0.utf8)) }
    }

    @Test func readsAStatusLineFieldsAndTheBlankLine() {
        var parser = HTTPClientResponseHeadParser()
        let results = feed(
            ["HTTP/1.1 206 Partial Content\r\n", "Content-Range: bytes 0-9/100\r\n", "ETag:  \"a\" \r\n", "\r\n"],
            into: &parser)
        #expect(results.dropLast().allSatisfy { $0 == .needMore })
        guard case .complete(let head) = results.last else {
            Issue.record("no head")
            return
        }
        #expect(head.status == .partialContent && head.version == "1.1" && head.reasonPhrase == "Partial Content")
        #expect(head.headers["content-range"] == "bytes 0-9/100")
        #expect(head.headers["ETag"] == "\"a\"")
    }

    @Test func readsHTTP2StatusLinesWithoutReasonAndBareLineFeeds() {
        var parser = HTTPClientResponseHeadParser()
        let results = feed(["HTTP/2 200\n", "a: 1\n", "\n"], into: &parser)
        #expect(results.last == .complete(.init(version: "2", status: .ok, reasonPhrase: "", headers: ["a": "1"])))
    }

    @Test func keepsEveryHeadOfAnExchangeNewestLast() {
        var parser = HTTPClientResponseHeadParser()
        _ = feed(
            [
                "HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 302 Found\r\n", "Location: /b\r\n", "\r\n",
                "HTTP/1.1 200 OK\r\n", "Content-Length: 3\r\n", "\r\n",
            ], into: &parser)
        #expect(parser.completedHeads.map(\.status) == [HTTPStatus(100), .found, .ok])
        #expect(parser.lastHead?.headers["content-length"] == "3")
    }

    @Test func joinsFoldedLines() {
        var parser = HTTPClientResponseHeadParser()
        _ = feed(["HTTP/1.1 200 OK\r\n", "X-Long: one\r\n", "   two\r\n", "\r\n"], into: &parser)
        #expect(parser.lastHead?.headers["x-long"] == "one two")
    }

    @Test(arguments: [
        ["GARBAGE\r\n"], ["HTTP/1.1 2x0 OK\r\n"], ["HTTP/1.1 99 Low\r\n"], ["HTTP/ 200 OK\r\n"],
        ["HTTP/1.1 200 OK\r\n", "no colon here\r\n"], ["HTTP/1.1 200 OK\r\n", ": empty name\r\n"],
        ["HTTP/1.1 200 OK\r\n", "Bad Name: x\r\n"], ["HTTP/1.1 200 OK\r\n", " fold without field\r\n"],
    ])
    func rejectsMalformedLines(lines: [String]) {
        var parser = HTTPClientResponseHeadParser()
        let results = feed(lines, into: &parser)
        guard case .malformed = results.last else {
            Issue.record("accepted \(lines)")
            return
        }
    }
}
