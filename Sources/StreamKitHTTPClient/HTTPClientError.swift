import StreamKitCore
import StreamKitHTTP

/// Why an HTTP client request failed, with the context of what failed: the URL, the HTTP status,
/// the byte offset the body reached, and libcurl's or our own explanation.
///
/// Errors compare equal by kind (`error.kind == .truncatedBody`, or `error == .cancelled`); the
/// rest is context for people and for retry decisions. New kinds may be added.
public struct HTTPClientError: KindedError {
    /// What went wrong, without the context.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The request cannot be sent: malformed URL, bad header, impossible range.
        public static let invalidRequest = Kind("invalid request")
        /// The URL, or a redirect target, is not http or https (`file://`, `ftp://` and the rest).
        public static let unsupportedScheme = Kind("unsupported scheme")
        /// The host name did not resolve.
        public static let couldNotResolveHost = Kind("could not resolve host")
        /// The TCP connection was refused or could not be made.
        public static let connectFailed = Kind("connect failed")
        /// The destination policy refused every address of the host (or of a redirect's host): no
        /// connection was attempted. Not retried.
        public static let destinationRefused = Kind("destination refused")
        /// The connection was not established within the connect timeout.
        public static let connectTimeout = Kind("connect timeout")
        /// No byte arrived within the idle timeout while the client wanted some.
        public static let idleTimeout = Kind("idle timeout")
        /// The whole transfer took longer than the total timeout.
        public static let totalTimeout = Kind("total timeout")
        /// The peer reset the connection, or sending or receiving failed.
        public static let connectionReset = Kind("connection reset")
        /// The peer closed the connection without sending a response.
        public static let emptyResponse = Kind("empty response")
        /// The body ended before the length the response announced (Content-Length or Content-Range).
        public static let truncatedBody = Kind("truncated body")
        /// The response is not HTTP: garbage status line, bad status code, broken chunked framing.
        public static let malformedResponse = Kind("malformed response")
        /// A response header line is longer than libcurl accepts (100 KB).
        public static let headerTooLarge = Kind("header too large")
        /// More redirects than the limit, or a redirect loop.
        public static let tooManyRedirects = Kind("too many redirects")
        /// TLS failed: handshake, or certificate verification.
        public static let tlsFailure = Kind("TLS failure")
        /// A compressed body could not be decoded.
        public static let contentDecodingFailed = Kind("content decoding failed")
        /// A 206 response's Content-Range does not match the requested range, or is missing.
        public static let contentRangeMismatch = Kind("Content-Range mismatch")
        /// The status is not one the operation can use (for example 404 to a download).
        public static let unexpectedStatus = Kind("unexpected status")
        /// The body is larger than the caller's limit.
        public static let bodyTooLarge = Kind("body too large")
        /// The representation changed between attempts (validator mismatch) where no restart is allowed.
        public static let representationChanged = Kind("representation changed")
        /// Writing the body to a file failed.
        public static let fileWriteFailed = Kind("file write failed")
        /// The request was cancelled (task cancellation, the body dropped, or the client shut down).
        public static let cancelled = Kind("cancelled")
        /// Any other transport failure libcurl reports.
        public static let transportFailure = Kind("transport failure")

        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// The URL being fetched when it failed (the redirect target for redirect failures).
    public let url: String?
    /// The response status, when one was received.
    public let status: HTTPStatus?
    /// For body failures: the offset in the representation that the body reached.
    public let byteOffset: Int64?
    /// For truncation: the offset the body should have reached.
    public let expectedByteOffset: Int64?
    /// The server's `Retry-After`, for 429 and 503 responses.
    public let retryAfter: RetryAfter?
    /// The explanation: libcurl's message or our own.
    public let detail: String
    /// For `fileWriteFailed`: the `errno` of the system call that failed, so that callers tell a
    /// full disk (`ENOSPC`, `EDQUOT`) from other failures without reading ``detail``.
    package let errno: Int32?

    /// Creates an error of `kind` with its context.
    public init(
        _ kind: Kind, url: String? = nil, status: HTTPStatus? = nil, byteOffset: Int64? = nil,
        expectedByteOffset: Int64? = nil, retryAfter: RetryAfter? = nil, detail: String = ""
    ) {
        self.kind = kind
        self.url = url
        self.status = status
        self.byteOffset = byteOffset
        self.expectedByteOffset = expectedByteOffset
        self.retryAfter = retryAfter
        self.detail = detail
        self.errno = nil
    }

    private init(copying error: HTTPClientError, url: String?) {
        kind = error.kind
        self.url = url
        status = error.status
        byteOffset = error.byteOffset
        expectedByteOffset = error.expectedByteOffset
        retryAfter = error.retryAfter
        detail = error.detail
        errno = error.errno
    }

    private init(fileWriteFailed failure: SystemError, url: String?, byteOffset: Int64?, detail: String) {
        kind = .fileWriteFailed
        self.url = url
        status = nil
        self.byteOffset = byteOffset
        expectedByteOffset = nil
        retryAfter = nil
        self.detail = detail
        errno = failure.code
    }

    /// Writing the body to a file failed with `failure`; its `errno` is kept.
    ///
    /// - Parameters:
    ///   - failure: The system call that failed.
    ///   - url: The URL being fetched.
    ///   - byteOffset: Where in the representation the write was.
    ///   - detail: The explanation; `failure`'s own by default.
    /// - Returns: An error of kind `fileWriteFailed`.
    package static func fileWriteFailed(
        _ failure: SystemError, url: String? = nil, byteOffset: Int64? = nil, detail: String? = nil
    ) -> HTTPClientError {
        HTTPClientError(fileWriteFailed: failure, url: url, byteOffset: byteOffset, detail: detail ?? "\(failure)")
    }

    /// A cancelled request.
    public static let cancelled = HTTPClientError(.cancelled, detail: "cancelled")

    /// A status the operation cannot use.
    public static func unexpectedStatus(
        _ status: HTTPStatus, url: String?, retryAfter: RetryAfter? = nil
    )
        -> HTTPClientError
    {
        HTTPClientError(.unexpectedStatus, url: url, status: status, retryAfter: retryAfter, detail: "HTTP \(status)")
    }

    /// The body ended at `reached` before `expected`.
    public static func truncatedBody(
        url: String?, reached: Int64, expected: Int64?, detail: String = ""
    )
        -> HTTPClientError
    {
        let end = expected.map { " of \($0)" } ?? ""
        return HTTPClientError(
            .truncatedBody, url: url, byteOffset: reached, expectedByteOffset: expected,
            detail: detail.isEmpty ? "body ended at byte \(reached)\(end)" : detail)
    }

    /// Returns a copy with `url` set when it had none.
    func with(url newURL: String) -> HTTPClientError {
        guard url == nil else { return self }
        return HTTPClientError(copying: self, url: newURL)
    }

    public var description: String {
        message(
            "\(kind)", url.map { " for \($0)" },
            status.flatMap { detail.contains("HTTP \($0.rawValue)") ? nil : " (HTTP \($0.rawValue))" },
            byteOffset.flatMap { kind == .truncatedBody ? nil : " at byte \($0)" })
    }
}
