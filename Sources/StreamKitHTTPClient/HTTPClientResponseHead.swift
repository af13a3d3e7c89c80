import Foundation
import StreamKitCore
import StreamKitHTTP

/// The head of the final response of an exchange (after redirects), with what it means for the
/// requested byte range.
public struct HTTPClientResponseHead: Hashable, Sendable {
    /// What the server did with the requested byte range (RFC 9110 §14.2, §15.3.7, §15.5.17).
    public enum RangeOutcome: Hashable, Sendable {
        /// No range was requested.
        case notRequested
        /// 206: the body holds exactly this part, checked against the request.
        case partial(ContentRange)
        /// 2xx with the whole representation: the server ignores `Range`, or the `If-Range`
        /// validator no longer matches. `representationChanged` says which, when the response
        /// carries a validator to compare (`nil` when it does not or none was sent). The caller
        /// must start over from byte zero.
        case ignored(representationChanged: Bool?)
        /// 416: the range starts at or past the end; the length is from `Content-Range: bytes */N`.
        case notSatisfiable(completeLength: Int64?)
        /// The status is neither success nor 416 (a redirect left unfollowed, or an error).
        case notApplicable
    }

    /// The status code.
    public let status: HTTPStatus
    /// The HTTP version: `1.1`, `1.0`, `2`.
    public let version: String
    /// The response's reason phrase (empty in HTTP/2).
    public let reasonPhrase: String
    /// The header fields, in order.
    public let headers: HTTPHeaders
    /// The URL of the response: the last redirect target, or the request's URL.
    public let url: String
    /// How many redirects were followed.
    public let redirectCount: Int
    /// What happened to the requested range.
    public let rangeOutcome: RangeOutcome

    /// Creates a head (for tests and other backends).
    public init(
        status: HTTPStatus, version: String = "1.1", reasonPhrase: String = "", headers: HTTPHeaders, url: String,
        redirectCount: Int = 0, rangeOutcome: RangeOutcome = .notRequested
    ) {
        self.status = status
        self.version = version
        self.reasonPhrase = reasonPhrase
        self.headers = headers
        self.url = url
        self.redirectCount = redirectCount
        self.rangeOutcome = rangeOutcome
    }

    /// `Content-Length`, when present and valid.
    public var contentLength: Int64? {
        guard let text = headers["Content-Length"], !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        return Int64(text)
    }

    /// `Content-Range`, when present and valid.
    public var contentRange: ContentRange? { headers["Content-Range"].flatMap(ContentRange.init(headerValue:)) }

    /// `ETag`, when present and valid.
    public var entityTag: EntityTag? { headers["ETag"].flatMap(EntityTag.init(headerValue:)) }

    /// `Last-Modified`, when present and valid.
    public var lastModified: Date? { headers["Last-Modified"].flatMap(HTTPDate.parse) }

    /// `Retry-After`, when present and valid.
    public var retryAfter: RetryAfter? { headers["Retry-After"].flatMap(RetryAfter.init(headerValue:)) }

    /// The validator to send in `If-Range` when resuming this representation, if it has one.
    public var ifRangeValidator: HTTPClientRequest.IfRange? { HTTPClientRequest.IfRange(responseHeaders: headers) }

    /// Whether the body is content-coded (gzip and the rest), so its byte count is not the
    /// representation's.
    public var isContentEncoded: Bool {
        headers.listValues("Content-Encoding").contains { $0.lowercased() != "identity" }
    }

    /// The representation offset of the body's first byte: the range start for a 206, else 0.
    public var bodyOffset: Int64 {
        if case .partial(let contentRange) = rangeOutcome, let range = contentRange.range { return range.lowerBound }
        return 0
    }

    /// The representation offset where the body must end, when announced.
    public var expectedBodyEnd: Int64? {
        if case .partial(let contentRange) = rangeOutcome { return contentRange.range?.upperBound }
        return contentLength
    }

    /// The whole representation's length, when announced (by Content-Range, or by Content-Length
    /// for a whole, unencoded body).
    public var completeLength: Int64? {
        switch rangeOutcome {
        case .partial(let contentRange): return contentRange.completeLength
        case .notSatisfiable(let length): return length
        default: return status.isSuccess && !isContentEncoded ? contentLength : nil
        }
    }
}

extension HTTPClientResponseHead {
    /// What a response with `status` and `headers` did with a requested range, or why it
    /// contradicts the request (RFC 9110 §14.2, §14.4, §15.3.7): a 206 must carry a
    /// `Content-Range` that starts where the request asked and ends no later.
    ///
    /// - Parameters:
    ///   - requested: The range in the request, if any.
    ///   - ifRange: The request's `If-Range` validator, if any.
    ///   - status: The response status.
    ///   - headers: The response headers.
    /// - Returns: The outcome, or a `contentRangeMismatch` error.
    public static func checkRange(
        requested: RangeRequest.Specifier?, ifRange: HTTPClientRequest.IfRange?, status: HTTPStatus,
        headers: HTTPHeaders
    ) -> Result<RangeOutcome, HTTPClientError> {
        RangeResponseCheck.outcome(requested: requested, ifRange: ifRange, status: status, headers: headers, url: nil)
    }
}

/// Checks a response against the range that was asked for.
enum RangeResponseCheck {
    /// The range outcome of a response, or why it contradicts the request.
    ///
    /// - Parameters:
    ///   - requested: The range in the request, if any.
    ///   - ifRange: The request's `If-Range` validator, if any.
    ///   - status: The response status.
    ///   - headers: The response headers.
    ///   - url: For error messages.
    static func outcome(
        requested: RangeRequest.Specifier?, ifRange: HTTPClientRequest.IfRange?, status: HTTPStatus,
        headers: HTTPHeaders, url: String?
    ) -> Result<HTTPClientResponseHead.RangeOutcome, HTTPClientError> {
        let contentRange = headers["Content-Range"].flatMap(ContentRange.init(headerValue:))
        guard let requested else {
            if status == .partialContent {
                return .failure(
                    HTTPClientError(
                        .contentRangeMismatch, url: url, status: status, detail: "206 to a request without Range"))
            }
            return .success(.notRequested)
        }
        if status == .rangeNotSatisfiable {
            return .success(.notSatisfiable(completeLength: contentRange?.completeLength))
        }
        guard status.isSuccess else { return .success(.notApplicable) }
        guard status == .partialContent else {
            return .success(.ignored(representationChanged: ifRange?.matches(responseHeaders: headers).map { !$0 }))
        }
        guard let contentRange, let range = contentRange.range else {
            let detail =
                headers["Content-Range"].map { "unusable Content-Range '\($0)'" }
                ?? "206 without Content-Range (multipart bodies are not supported)"
            return .failure(HTTPClientError(.contentRangeMismatch, url: url, status: status, detail: detail))
        }
        let complete = contentRange.completeLength
        let expectedStart: Int64?
        let expectedEnd: Int64?  // exclusive
        switch requested {
        case .closed(let first, let last):
            expectedStart = first
            expectedEnd = complete.map { min(last + 1, $0) } ?? last + 1
        case .from(let first):
            expectedStart = first
            expectedEnd = complete
        case .suffix(let length):
            expectedStart = complete.map { max(0, $0 - length) }
            expectedEnd = complete
        }
        let asked = RangeRequest([requested]).headerValue
        if let expectedStart, range.lowerBound != expectedStart {
            return .failure(
                HTTPClientError(
                    .contentRangeMismatch, url: url, status: status,
                    detail: "asked for \(asked), got \(contentRange.headerValue)"))
        }
        if let expectedEnd, range.upperBound > expectedEnd {
            return .failure(
                HTTPClientError(
                    .contentRangeMismatch, url: url, status: status,
                    detail: "asked for \(asked), got \(contentRange.headerValue)"))
        }
        if let lengthText = headers["Content-Length"], let length = Int64(lengthText), length != range.count {
            return .failure(
                HTTPClientError(
                    .contentRangeMismatch, url: url, status: status,
                    detail: "Content-Length \(length) does not match \(contentRange.headerValue)"))
        }
        return .success(.partial(contentRange))
    }
}
