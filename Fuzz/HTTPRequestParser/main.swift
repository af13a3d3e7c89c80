// Fuzz the HTTP request parser with any bytes, fed whole and in pieces.
// Run: Fuzz/run.sh HTTPRequestParser -max_total_time=600
import StreamKitHTTPServer

/// What a parse produced: events (adjacent body pieces joined) and the error, if any.
private struct Outcome: Equatable {
    var events: [HTTPRequestParser.Event] = []
    var error: HTTPRequestParseError?
}

private func parse(_ bytes: [UInt8], pieces: [Int], limits: HTTPRequestParser.Limits) -> Outcome {
    var parser = HTTPRequestParser(limits: limits)
    var outcome = Outcome()
    var offset = 0
    var index = 0
    repeat {
        let size = pieces.isEmpty ? bytes.count : max(1, pieces[index % pieces.count])
        index += 1
        let end = min(bytes.count, offset + size)
        parser.feed(bytes[offset..<end])
        offset = end
        do {
            while let event = try parser.next() {
                if case .body(let more) = event, case .body(let earlier)? = outcome.events.last {
                    outcome.events[outcome.events.count - 1] = .body(earlier + more)
                } else {
                    outcome.events.append(event)
                }
            }
        } catch {
            outcome.error = error
            return outcome
        }
    } while offset < bytes.count
    return outcome
}

private func isToken(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

/// The head written back as a request, without body framing fields.
private func serialize(_ head: HTTPServerRequestHead) -> [UInt8] {
    var text = "\(head.method.rawValue) \(head.target) \(head.version)\r\n"
    for field in head.headers { text += "\(field.name): \(field.value)\r\n" }
    return Array((text + "\r\n").utf8)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    // The first byte picks the limits (small ones reach the 414/431/413 paths) and the split.
    let selector = bytes.first ?? 0
    let limits =
        selector & 1 == 0
        ? HTTPRequestParser.Limits()
        : HTTPRequestParser.Limits(
            maximumRequestLineLength: 40, maximumHeaderSectionLength: 120, maximumHeaderFieldCount: 4,
            maximumBodyLength: 64)
    let whole = parse(bytes, pieces: [], limits: limits)
    let pieces = bytes.prefix(8).map { Int($0 % 17) + 1 }
    precondition(parse(bytes, pieces: pieces, limits: limits) == whole, "split parse differs")
    if selector & 2 != 0 {
        precondition(parse(bytes, pieces: [1], limits: limits) == whole, "byte-at-a-time parse differs")
    }

    var expectingHead = true
    var bodyLength = 0
    for event in whole.events {
        switch event {
        case .head(let head):
            precondition(expectingHead, "a head inside a request")
            expectingHead = false
            bodyLength = 0
            precondition(isToken(head.method.rawValue), "method is not a token")
            precondition(head.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "target has invalid bytes")
            precondition(head.version == .http10 || head.version == .http11, "unexpected version")
            precondition(head.target.utf8.count <= limits.maximumRequestLineLength, "request line over the limit")
            precondition(head.headers.count <= limits.maximumHeaderFieldCount, "too many fields")
            for field in head.headers {
                precondition(isToken(field.name), "field name is not a token")
                precondition(!field.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }, "bad value")
                precondition(field.value.first != " " && field.value.last != " ", "value not trimmed")
            }
            _ = head.path
            _ = head.query
            _ = head.keepAlive
            // A head written back parses to the same head.
            let again = parse(serialize(head), pieces: [], limits: HTTPRequestParser.Limits())
            if case .head(let reparsed)? = again.events.first, again.error == nil {
                precondition(reparsed == head, "reparsed head differs")
            } else if head.headers.values("Content-Length").isEmpty && head.headers.values("Transfer-Encoding").isEmpty
            {
                preconditionFailure("a parsed head does not parse again: \(again.error.map { "\($0)" } ?? "")")
            }
        case .body(let piece):
            precondition(!expectingHead, "a body outside a request")
            bodyLength += piece.count
            precondition(Int64(bodyLength) <= limits.maximumBodyLength, "body over the limit")
        case .end:
            precondition(!expectingHead, "an end outside a request")
            expectingHead = true
        }
    }
    if let error = whole.error {
        precondition([400, 413, 414, 431, 501, 505].contains(error.status.rawValue), "unexpected status")
    }
    return 0
}
