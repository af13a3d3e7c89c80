// Fuzz the client's response-head reading: status lines and fields as libcurl hands them over,
// and the header values the client interprets (Content-Length, Content-Range, ETag, dates,
// Retry-After, If-Range validators, range checks).
// Run: Fuzz/run.sh HTTPClientResponseHead -max_total_time=600
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    // libcurl hands over one line per call, split after each LF.
    var parser = HTTPClientResponseHeadParser()
    var lineStart = 0
    for index in 0..<bytes.count where bytes[index] == 10 || index == bytes.count - 1 {
        let result = parser.feed(line: bytes[lineStart...index])
        lineStart = index + 1
        if case .malformed = result { break }
    }
    for head in parser.completedHeads {
        // A parsed head, written back as lines, parses to the same head.
        var again = HTTPClientResponseHeadParser()
        var last: HTTPClientResponseHeadParser.LineResult = .needMore
        for line in head.lines { last = again.feed(line: Array(line.utf8)) }
        precondition(last == .complete(head), "round trip changed \(head)")

        // Interpreting its fields never traps, and what it derives is consistent.
        let response = HTTPClientResponseHead(
            status: head.status, version: head.version, headers: head.headers, url: "http://fuzz/")
        if let length = response.contentLength { precondition(length >= 0) }
        if let range = response.contentRange?.range, let complete = response.contentRange?.completeLength {
            precondition(range.upperBound <= complete)
        }
        _ = response.retryAfter
        _ = response.ifRangeValidator?.matches(responseHeaders: head.headers)
        for specifier: RangeRequest.Specifier in [.closed(first: 0, last: 99), .from(first: 10), .suffix(length: 5)] {
            let outcome = HTTPClientResponseHead.checkRange(
                requested: specifier, ifRange: response.ifRangeValidator, status: head.status, headers: head.headers)
            if case .success(.partial(let contentRange)) = outcome, let range = contentRange.range {
                precondition(!range.isEmpty)
            }
        }
    }
    return 0
}
