import Foundation
import StreamKitCore
import StreamKitHTTP
import Testing

@Suite struct HTTPHeadersTests {
    @Test func lookupIsCaseInsensitiveAndOrderIsKept() {
        var headers: HTTPHeaders = ["Content-Type": "video/mp2t", "set-cookie": "a=1"]
        headers.add("Set-Cookie", "b=2")
        #expect(headers["content-type"] == "video/mp2t")
        #expect(headers.values("SET-COOKIE") == ["a=1", "b=2"])
        headers.replaceOrAdd("SET-COOKIE", "c=3")
        #expect(headers.values("set-cookie") == ["c=3"])
        #expect(headers.fields.map(\.name) == ["Content-Type", "set-cookie"])
        headers.remove("content-type")
        #expect(!headers.contains("Content-Type") && headers.count == 1)
        #expect(HTTPHeaders([("A", "1")]) == HTTPHeaders([("a", "1")]))
    }

    @Test func listValuesSplitOutsideQuotes() {
        let headers: HTTPHeaders = ["If-None-Match": "\"a,b\", W/\"c\" ,, \"d\""]
        #expect(headers.listValues("if-none-match") == ["\"a,b\"", "W/\"c\"", "\"d\""])
    }
}

@Suite struct RangeRequestTests {
    @Test(arguments: [
        ("bytes=0-99", [RangeRequest.Specifier.closed(first: 0, last: 99)]),
        ("bytes=100-", [.from(first: 100)]),
        ("bytes=-500", [.suffix(length: 500)]),
        ("Bytes = 0-0, 5-9 ,", nil),
        ("bytes=0-0, 5-9 ,", [.closed(first: 0, last: 0), .closed(first: 5, last: 9)]),
    ])
    func parses(value: String, expected: [RangeRequest.Specifier]?) {
        #expect(RangeRequest(headerValue: value)?.specifiers == expected)
    }

    @Test(arguments: [
        "", "bytes=", "bytes=5-4", "bytes=a-b", "items=0-1", "bytes=--1", "bytes=1-2-3", "bytes=99999999999999999999-",
    ])
    func rejectsMalformed(value: String) {
        #expect(RangeRequest(headerValue: value) == nil)
    }

    @Test func rejectsTooManyRanges() {
        let many = "bytes=" + (0..<65).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",")
        #expect(RangeRequest(headerValue: many) == nil)
    }

    @Test func resolvesAgainstTheLength() {
        func resolve(_ value: String, _ length: Int64) -> RangeRequest.Resolution? {
            RangeRequest(headerValue: value)?.resolve(length: length)
        }
        #expect(resolve("bytes=0-99", 50) == .satisfiable([ByteRange(0, 50)]))
        #expect(resolve("bytes=40-", 50) == .satisfiable([ByteRange(40, 50)]))
        #expect(resolve("bytes=-10", 50) == .satisfiable([ByteRange(40, 50)]))
        #expect(resolve("bytes=-100", 50) == .satisfiable([ByteRange(0, 50)]))
        #expect(resolve("bytes=50-", 50) == .unsatisfiable)
        #expect(resolve("bytes=-0", 50) == .unsatisfiable)
        #expect(resolve("bytes=0-", 0) == .unsatisfiable)
        #expect(resolve("bytes=60-70,0-1", 50) == .satisfiable([ByteRange(0, 2)]))
        #expect(RangeRequest(ByteRange(10, 20)).headerValue == "bytes=10-19")
    }
}

@Suite struct ContentRangeTests {
    @Test func parsesAndFormats() {
        let full = ContentRange(headerValue: "bytes 0-99/1000")
        #expect(full?.range == ByteRange(0, 100) && full?.completeLength == 1000)
        #expect(full?.headerValue == "bytes 0-99/1000")
        #expect(ContentRange(headerValue: "bytes 5-9/*")?.completeLength == nil)
        let unsatisfied = ContentRange(headerValue: "bytes */1000")
        #expect(unsatisfied == .unsatisfied(completeLength: 1000) && unsatisfied?.range == nil)
        #expect(ContentRange.unsatisfied(completeLength: 7).headerValue == "bytes */7")
    }

    @Test(arguments: [
        "bytes 0-99/50", "bytes 9-5/100", "bytes */*", "bytes 0-99", "items 0-1/2", "bytes a-b/3", "bytes -1-2/3",
    ])
    func rejectsInconsistent(value: String) {
        #expect(ContentRange(headerValue: value) == nil)
    }
}

@Suite struct EntityTagTests {
    @Test func parsingAndComparison() throws {
        let strong = try #require(EntityTag(headerValue: "\"abc\""))
        let weak = try #require(EntityTag(headerValue: "W/\"abc\""))
        #expect(!strong.isWeak && weak.isWeak && weak.headerValue == "W/\"abc\"")
        #expect(strong.strongMatches(strong) && !strong.strongMatches(weak))
        #expect(strong.weakMatches(weak))
        #expect(EntityTag(headerValue: "abc") == nil && EntityTag(headerValue: "\"a\"b\"") == nil)
        let condition = try #require(EntityTagCondition(listMembers: ["\"x\"", "W/\"abc\""]))
        #expect(condition.weaklyMatches(strong))
        #expect(EntityTagCondition(listMembers: ["*"]) == .any)
    }
}

@Suite struct HTTPDateTests {
    @Test func allThreeFormsParse() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("yesterday") == nil && HTTPDate.parse("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
    }

    @Test func formatRoundTripsAcrossCenturies() {
        for seconds in stride(from: Int64(-2_000_000_000), through: 4_000_000_000, by: 86_399_777) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }
}
