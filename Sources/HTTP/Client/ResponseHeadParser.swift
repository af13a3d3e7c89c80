/// Reads the response head lines libcurl hands to its header callback, one line at a time:
/// a status line, header fields (with obsolete line folding), and a blank line, for every
/// response of the exchange: 1xx interim responses, each redirect hop, and the final response.
///
/// Lines after a complete head start a new one, so the last complete head is the newest response.
/// Pure: no I/O, fed by the transfer state machine.
struct ResponseHeadParser: Sendable {
    /// One complete response head.
    struct Head: Hashable, Sendable {
        /// `1.1`, `1.0`, `2`, `3`.
        var version: String
        var status: HTTPStatus
        var reasonPhrase: String
        var headers: HTTPHeaders
    }

    /// What one line did.
    enum LineResult: Hashable, Sendable {
        /// The head is not complete yet.
        case needMore
        /// A head is complete.
        case complete(Head)
        /// The line is not a status line where one is due, or not a header field.
        case malformed(String)
    }

    private var current: Head?
    /// The heads completed so far, newest last (1xx and redirects included).
    private(set) var completedHeads: [Head] = []

    /// The newest complete head.
    var lastHead: Head? { completedHeads.last }

    /// Feeds one line, with or without its CRLF.
    mutating func feed(line bytes: some Collection<UInt8>) -> LineResult {
        var line = Substring(String(decoding: bytes, as: UTF8.self))
        while let last = line.last, last == "\n" || last == "\r" || last == "\r\n" { line = line.dropLast() }
        guard var head = current else {
            if line.isEmpty { return .needMore }  // stray blank line between responses
            guard let parsed = Self.statusLine(line) else {
                return .malformed("invalid status line '\(line.prefix(80))'")
            }
            current = parsed
            return .needMore
        }
        if line.isEmpty {
            current = nil
            completedHeads.append(head)
            // Only the newest heads matter; keep the list short on long redirect chains.
            if completedHeads.count > 64 { completedHeads.removeFirst(completedHeads.count - 64) }
            return .complete(head)
        }
        if line.first == " " || line.first == "\t" {
            // obs-fold (RFC 9112 §5.2): the line continues the previous field's value.
            guard let last = head.headers.fields.last else { return .malformed("folded line without a field") }
            var fields = head.headers.fields.dropLast().map { ($0.name, $0.value) }
            fields.append((last.name, last.value + " " + line.trimmingHTTPWhitespace()))
            head.headers = HTTPHeaders(fields)
            current = head
            return .needMore
        }
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            return .malformed("invalid header line '\(line.prefix(80))'")
        }
        let name = line[..<colon]
        guard !name.contains(where: { $0 == " " || $0 == "\t" }) else {
            return .malformed("invalid header name '\(name.prefix(80))'")
        }
        head.headers.add(String(name), line[line.index(after: colon)...].trimmingHTTPWhitespace())
        current = head
        return .needMore
    }

    /// `HTTP/1.1 200 OK`, `HTTP/2 200`: the version, a three-digit code, an optional reason.
    static func statusLine(_ line: Substring) -> Head? {
        guard line.hasPrefix("HTTP/") else { return nil }
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        let version = parts[0].dropFirst(5)
        guard !version.isEmpty, version.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else { return nil }
        let codeText = parts[1]
        guard codeText.count == 3, codeText.allSatisfy({ $0.isASCII && $0.isNumber }), let code = Int(codeText),
            code >= 100
        else { return nil }
        return Head(
            version: String(version), status: HTTPStatus(code),
            reasonPhrase: parts.count > 2 ? String(parts[2]) : "", headers: HTTPHeaders())
    }
}
