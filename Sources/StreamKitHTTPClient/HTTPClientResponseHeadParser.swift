/// Reads response head lines as libcurl hands them to its header callback, one line at a time:
/// a status line (RFC 9112 §4), header fields (§5, with obsolete line folding, §5.2), and a
/// blank line, for every response of the exchange: 1xx interim responses, each redirect hop,
/// and the final response.
///
/// Lines after a complete head start a new one, so the last complete head is the newest response.
/// Pure: no I/O, fed by the transfer state machine.
import StreamKitHTTP

public struct HTTPClientResponseHeadParser: Sendable {
    /// One complete response head (RFC 9112 §4 status line, §5 fields).
    public struct Head: Hashable, Sendable {
        /// `1.1`, `1.0`, `2`, `3`.
        public var version: String
        /// The status code.
        public var status: HTTPStatus
        /// The reason phrase, possibly empty.
        public var reasonPhrase: String
        /// The fields, in order.
        public var headers: HTTPHeaders

        /// Creates a head.
        public init(version: String, status: HTTPStatus, reasonPhrase: String, headers: HTTPHeaders) {
            self.version = version
            self.status = status
            self.reasonPhrase = reasonPhrase
            self.headers = headers
        }

        /// The head as lines with CRLF, ending with the blank line.
        public var lines: [String] {
            ["HTTP/\(version) \(status.rawValue)" + (reasonPhrase.isEmpty ? "" : " \(reasonPhrase)") + "\r\n"]
                + headers.fields.map { "\($0.name): \($0.value)\r\n" } + ["\r\n"]
        }
    }

    /// What one line did.
    public enum LineResult: Hashable, Sendable {
        /// The head is not complete yet.
        case needMore
        /// A head is complete.
        case complete(Head)
        /// The line is not a status line where one is due, or not a header field.
        case malformed(String)
    }

    private var current: Head?
    /// The heads completed so far, newest last (1xx and redirects included; at most 64).
    public private(set) var completedHeads: [Head] = []

    /// Creates a parser expecting a status line.
    public init() {}

    /// The newest complete head.
    public var lastHead: Head? { completedHeads.last }

    /// Feeds one line, with or without its CRLF.
    public mutating func feed(line bytes: some BidirectionalCollection<UInt8>) -> LineResult {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == 10 || bytes[bytes.index(before: end)] == 13 {
            end = bytes.index(before: end)
        }
        // A CR, LF or NUL left inside a line becomes a space (RFC 9110 §5.5).
        let line = Substring(
            String(
                decoding: bytes[bytes.startIndex..<end].map { $0 == 13 || $0 == 10 || $0 == 0 ? 32 : $0 }, as: UTF8.self
            ))
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
            let continuation = line.trimmingHTTPWhitespace()
            fields.append(
                (
                    last.name,
                    continuation.isEmpty ? last.value : (last.value + " " + continuation).trimmingHTTPWhitespace()
                ))
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
