import StreamKitHTTP
import Testing

@testable import StreamKitHTTPClient

/// What the client's own connection does with a response head (pure: no sockets).
@Suite struct PlainHTTPResponsePlanTests {
    struct FinalCase: CustomTestStringConvertible, Sendable {
        var name: String
        var status: HTTPStatus = .ok
        var version = "1.1"
        var headers: [(String, String)]
        var decodesContent = false
        var bytesWithHead = 0
        var expected: PlainHTTPResponsePlan

        var testDescription: String { name }
    }

    static let finalCases: [FinalCase] = [
        .init(name: "a length", headers: [("Content-Length", "10")], expected: .read(.bytes(10), then: .keep)),
        .init(
            name: "the whole body with the head", headers: [("Content-Length", "10")], bytesWithHead: 10,
            expected: .read(.bytes(10), then: .keep)),
        .init(
            name: "bytes past the body with the head", headers: [("Content-Length", "10")], bytesWithHead: 11,
            expected: .read(.bytes(10), then: .close)),
        .init(name: "no length", headers: [], expected: .read(.untilClose, then: .close)),
        .init(name: "an empty body", headers: [("Content-Length", "0")], expected: .read(.bytes(0), then: .keep)),
        .init(
            name: "204 whatever its length", status: .noContent, headers: [("Content-Length", "10")],
            expected: .read(.bytes(0), then: .keep)),
        .init(
            name: "304 without a length", status: .notModified, headers: [], expected: .read(.bytes(0), then: .keep)),
        .init(
            name: "304 with bytes after the head", status: .notModified, headers: [], bytesWithHead: 1,
            expected: .read(.bytes(0), then: .close)),
        .init(
            name: "an unfollowed redirect with a length", status: .found, headers: [("Content-Length", "3")],
            expected: .read(.bytes(3), then: .keep)),
        .init(
            name: "Connection: close", headers: [("Content-Length", "10"), ("Connection", "close")],
            expected: .read(.bytes(10), then: .close)),
        .init(
            name: "close among the Connection options",
            headers: [("Content-Length", "10"), ("Connection", "Upgrade, Close")],
            expected: .read(.bytes(10), then: .close)),
        .init(
            name: "Connection: keep-alive", headers: [("Content-Length", "10"), ("Connection", "keep-alive")],
            expected: .read(.bytes(10), then: .keep)),
        .init(
            name: "HTTP/1.0", version: "1.0", headers: [("Content-Length", "10"), ("Connection", "keep-alive")],
            expected: .read(.bytes(10), then: .close)),
        .init(
            name: "equal Content-Length fields", headers: [("Content-Length", "10"), ("Content-Length", "10")],
            expected: .read(.bytes(10), then: .keep)),
        .init(
            name: "chunked", headers: [("Transfer-Encoding", "chunked")],
            expected: .handToLibcurl(.transferCoding)),
        .init(
            name: "a transfer coding with a length",
            headers: [("Transfer-Encoding", "gzip"), ("Content-Length", "10")],
            expected: .handToLibcurl(.transferCoding)),
        .init(
            name: "a transfer coding on a 204", status: .noContent, headers: [("Transfer-Encoding", "chunked")],
            expected: .handToLibcurl(.transferCoding)),
        .init(
            name: "a coded body to decode", headers: [("Content-Encoding", "gzip"), ("Content-Length", "10")],
            decodesContent: true, expected: .handToLibcurl(.contentCoding)),
        .init(
            name: "a coded body kept as it is", headers: [("Content-Encoding", "gzip"), ("Content-Length", "10")],
            expected: .read(.bytes(10), then: .keep)),
        .init(
            name: "identity is no coding", headers: [("Content-Encoding", "identity"), ("Content-Length", "10")],
            decodesContent: true, expected: .read(.bytes(10), then: .keep)),
        .init(
            name: "an unparsable length", headers: [("Content-Length", "ten")],
            expected: .handToLibcurl(.unparsableContentLength)),
        .init(
            name: "a negative length", headers: [("Content-Length", "-1")],
            expected: .handToLibcurl(.unparsableContentLength)),
        .init(
            name: "a list of lengths in one field", headers: [("Content-Length", "10, 10")],
            expected: .handToLibcurl(.unparsableContentLength)),
        .init(
            name: "conflicting lengths", headers: [("Content-Length", "10"), ("Content-Length", "12")],
            expected: .handToLibcurl(.conflictingContentLengths)),
    ]

    @Test(arguments: finalCases)
    func finalHead(_ row: FinalCase) {
        let head = HTTPClientResponseHead(
            status: row.status, version: row.version, headers: HTTPHeaders(row.headers), url: "http://h/x")
        var request = HTTPClientRequest(url: "http://h/x")
        request.decodesContent = row.decodesContent
        #expect(PlainHTTPResponsePlan(head: head, request: request, bytesWithHead: row.bytesWithHead) == row.expected)
    }

    struct RedirectCase: CustomTestStringConvertible, Sendable {
        var name: String
        var headers: [(String, String)]
        var requestLimit: Int?
        var clientLimit = 10
        var expected: PlainHTTPResponsePlan?

        var testDescription: String { name }
    }

    static let redirectCases: [RedirectCase] = [
        .init(name: "followed", headers: [("Location", "/there")], expected: .handToLibcurl(.redirect)),
        .init(
            name: "followed under the request's limit", headers: [("Location", "/there")], requestLimit: 1,
            clientLimit: 0, expected: .handToLibcurl(.redirect)),
        .init(name: "no Location", headers: [("Content-Length", "0")], expected: nil),
        .init(name: "the request follows none", headers: [("Location", "/there")], requestLimit: 0, expected: nil),
        .init(name: "a negative limit", headers: [("Location", "/there")], requestLimit: -1, expected: nil),
        .init(name: "the client follows none", headers: [("Location", "/there")], clientLimit: 0, expected: nil),
    ]

    @Test(arguments: redirectCases)
    func redirectHead(_ row: RedirectCase) {
        let head = HTTPClientResponseHeadParser.Head(
            version: "1.1", status: .found, reasonPhrase: "Found", headers: HTTPHeaders(row.headers))
        var request = HTTPClientRequest(url: "http://h/x")
        request.redirectLimit = row.requestLimit
        #expect(
            PlainHTTPResponsePlan(redirect: head, request: request, defaultRedirectLimit: row.clientLimit)
                == row.expected)
    }
}
