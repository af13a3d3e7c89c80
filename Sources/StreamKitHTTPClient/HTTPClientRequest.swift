import Foundation
import StreamKitCore
import StreamKitHTTP

/// One HTTP request for ``HTTPClient``: method, URL, headers, cookies, an optional byte range with
/// its `If-Range` validator, and per-request overrides of the client's limits.
public struct HTTPClientRequest: Sendable {
    /// The `If-Range` validator (RFC 9110 §13.1.5): the server sends the range only if the
    /// representation still matches, otherwise the whole new representation with 200, so that a
    /// resumed body never mixes two versions.
    public enum IfRange: Hashable, Sendable, CustomStringConvertible {
        /// A strong entity tag (weak tags cannot be used with `If-Range`).
        case entityTag(EntityTag)
        /// The `Last-Modified` date, when there is no strong entity tag.
        case lastModified(Date)

        /// The best validator a response offers: its strong ETag, else its Last-Modified date,
        /// else `nil` (a resumed body could then not be checked, so it must not be resumed).
        ///
        /// A date is only used when it is at least a second older than the response's `Date`,
        /// or there is no `Date` (RFC 9110 §13.1.5's rule for treating a date as strong).
        public init?(responseHeaders headers: HTTPHeaders) {
            if let tag = headers["ETag"].flatMap(EntityTag.init(headerValue:)), !tag.isWeak {
                self = .entityTag(tag)
                return
            }
            guard let modified = headers["Last-Modified"].flatMap(HTTPDate.parse) else { return nil }
            if let date = headers["Date"].flatMap(HTTPDate.parse), date.timeIntervalSince(modified) < 1 { return nil }
            self = .lastModified(modified)
        }

        /// The `If-Range` header value.
        public var headerValue: String {
            switch self {
            case .entityTag(let tag): tag.headerValue
            case .lastModified(let date): HTTPDate.format(date)
            }
        }

        /// Whether a response with `headers` carries the same validator: `true` when it does,
        /// `false` when it carries a different one, `nil` when it carries none to compare.
        public func matches(responseHeaders headers: HTTPHeaders) -> Bool? {
            switch self {
            case .entityTag(let tag):
                guard let other = headers["ETag"].flatMap(EntityTag.init(headerValue:)) else { return nil }
                return tag.strongMatches(other)
            case .lastModified(let date):
                guard let other = headers["Last-Modified"].flatMap(HTTPDate.parse) else { return nil }
                return other == date
            }
        }

        public var description: String { headerValue }
    }

    /// The URL, `http` or `https` only.
    public var url: String
    /// The method; `HEAD` asks for no body.
    public var method: HTTPMethod
    /// Extra request headers, sent as given (`Range`, `If-Range` and `Cookie` come from the fields below).
    public var headers: HTTPHeaders
    /// A small request body, sent with its length.
    public var body: [UInt8]?
    /// One byte range to ask for (RFC 9110 §14.2). Multiple ranges (multipart bodies) are not supported.
    public var range: RangeRequest.Specifier?
    /// Sends the range only if the representation still matches this validator.
    public var ifRange: IfRange?
    /// Cookies sent in one `Cookie` header, in order.
    public var cookies: [(name: String, value: String)]
    /// The `User-Agent`; the client's default when `nil`.
    public var userAgent: String?
    /// Timeouts for this request; the client's when `nil`.
    public var timeouts: HTTPClientTimeouts?
    /// The most redirects followed; the client's when `nil`. Zero returns the 3xx response itself.
    public var redirectLimit: Int?
    /// Asks for compressed bodies (gzip, deflate, br, zstd) and decodes them. Ignored when a range
    /// is requested: ranges count bytes of the identity encoding, so those ask for no encoding.
    public var decodesContent: Bool
    /// A receive-rate limit for this transfer alone, in bytes a second: a token bucket of its own
    /// (the client's global bucket still applies).
    public var maximumReceiveRate: Int64?
    /// Says that the body will be stored in a file with ``HTTPClientResponse/Body/write(toFileDescriptor:at:progressInterval:isolation:onProgress:)``.
    /// On Linux a plain `http` GET then runs over the client's own connection, and the body
    /// moves from the socket into the file with `splice(2)`, never copied through user space
    /// (other requests, and responses that are redirects or chunked, go through libcurl). Such a
    /// request asks for no content coding. Reading the body by chunks still works.
    public var bodyIsWrittenToFile: Bool

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - url: The URL, `http` or `https`.
    ///   - method: The method, GET by default.
    ///   - headers: Extra headers.
    public init(url: String, method: HTTPMethod = .get, headers: HTTPHeaders = [:]) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = nil
        self.range = nil
        self.ifRange = nil
        self.cookies = []
        self.userAgent = nil
        self.timeouts = nil
        self.redirectLimit = nil
        self.decodesContent = true
        self.maximumReceiveRate = nil
        self.bodyIsWrittenToFile = false
    }

    /// Creates a GET request for `url`.
    public init(url: URL, headers: HTTPHeaders = [:]) {
        self.init(url: url.absoluteString, headers: headers)
    }

    /// The value of the `Cookie` header, or `nil` when there are no cookies.
    public var cookieHeaderValue: String? {
        cookies.isEmpty ? nil : cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Whether a body is expected in the response.
    var expectsBody: Bool { method != .head }

    /// Checks that the URL is http or https with a host, before anything is sent.
    func validateURL() throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw HTTPClientError(.invalidRequest, url: url, detail: "not a valid URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw HTTPClientError(
                .unsupportedScheme, url: url, detail: "only http and https URLs are supported, not \(scheme)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw HTTPClientError(.invalidRequest, url: url, detail: "the URL has no host")
        }
    }

    /// The request's header fields as sent, with Range and If-Range from their fields; throws
    /// for names or values that would break the message (CR, LF, NUL; names that are not tokens).
    func headerFieldsToSend() throws -> HTTPHeaders {
        var headers = self.headers
        if let range {
            headers.replaceOrAdd("Range", RangeRequest([range]).headerValue)
            if let ifRange { headers.replaceOrAdd("If-Range", ifRange.headerValue) }
        }
        for field in headers {
            // Bytes, not Characters: "\r\n" is one Character, equal to neither "\r" nor "\n".
            guard !field.name.isEmpty, !field.name.utf8.contains(where: { $0 == 58 || $0 <= 32 || $0 == 127 }),
                !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
            else {
                throw HTTPClientError(.invalidRequest, url: url, detail: "invalid header '\(field.name)'")
            }
        }
        return headers
    }
}

/// How long the client waits (RFC 9110 has none: these are the client's own limits).
public struct HTTPClientTimeouts: Hashable, Sendable {
    /// For the TCP (and TLS) connection to be established, per connection attempt.
    public var connect: Duration
    /// For the next byte while the client wants one (before the head, and while the body is not
    /// paused by a slow consumer or a rate limit); `nil` waits forever.
    public var idle: Duration?
    /// For the whole transfer, redirects included; `nil` waits forever.
    public var total: Duration?

    /// Creates timeouts.
    public init(connect: Duration = .seconds(30), idle: Duration? = .seconds(60), total: Duration? = nil) {
        self.connect = connect
        self.idle = idle
        self.total = total
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a short positive duration never becomes zero.
    var wholeMilliseconds: Int64 {
        let parts = components
        let fraction = parts.attoseconds > 0 ? (parts.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000 : 0
        let (product, overflow) = parts.seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? Int64.max : product + fraction
    }

    /// The duration in seconds as a floating-point number.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
