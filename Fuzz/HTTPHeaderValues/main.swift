// Fuzz the HTTP header-value parsers that read bytes from the network.
// Run: Fuzz/run.sh HTTPHeaderValues -max_total_time=600
import StreamKitCore
import StreamKitHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    if let request = RangeRequest(headerValue: text) {
        // A parsed header formats to text that parses to the same ranges.
        precondition(RangeRequest(headerValue: request.headerValue) == request)
        for length in [0, 1, 100, Int64.max / 2] {
            if case .satisfiable(let ranges) = request.resolve(length: length) {
                precondition(ranges.allSatisfy { $0.upperBound <= length && !$0.isEmpty })
            }
        }
    }
    if let range = ContentRange(headerValue: text) {
        precondition(ContentRange(headerValue: range.headerValue) == range)
    }
    if let tag = EntityTag(headerValue: text) {
        precondition(EntityTag(headerValue: tag.headerValue) == tag)
    }
    if let date = HTTPDate.parse(text) {
        precondition(HTTPDate.parse(HTTPDate.format(date)) == date)
    }
    let headers = HTTPHeaders([("X", text)])
    _ = headers.listValues("x")
    return 0
}
