import StreamKitCore
import StreamKitHTTP

/// A response a route handler returns: status, header fields and a body.
///
/// The server adds the framing fields itself (`Content-Length` or `Transfer-Encoding: chunked`,
/// `Connection`, `Date`), leaves the body out for HEAD, 204 and 304, and adds the CORS fields
/// when the request's origin is allowed.
public struct HTTPServerResponse: Sendable {
    /// What follows the head.
    public enum Body: Sendable {
        /// No body (`Content-Length: 0` where a body is allowed).
        case empty
        /// Bytes in memory.
        case bytes([UInt8])
        /// A region of an open file, sent with `sendfile`.
        case file(HTTPFileRegion)
        /// Chunks produced while the response is sent, with backpressure: chunked on HTTP/1.1
        /// (or raw when the handler set `Content-Length`), delimited by closing on HTTP/1.0.
        case stream(HTTPBodyStream)

        /// The body's length when it is known before it is sent.
        public var knownLength: Int64? {
            switch self {
            case .empty: 0
            case .bytes(let bytes): Int64(bytes.count)
            case .file(let region): region.range.count
            case .stream: nil
            }
        }
    }

    /// The status.
    public var status: HTTPStatus
    /// Header fields the handler sets (not the framing fields, which the server writes).
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body
    /// The explanation of an error or status answer made by ``status(_:message:)`` (empty when
    /// it has none), so that the server can send it as JSON where JSON is expected.
    var statusMessage: String?

    /// A response; 200 with no body unless told otherwise.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPServerResponse {
        HTTPServerResponse(
            status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }

    /// A `text/html; charset=utf-8` response.
    public static func html(_ html: String, status: HTTPStatus = .ok) -> HTTPServerResponse {
        HTTPServerResponse(
            status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: .bytes(Array(html.utf8)))
    }

    /// An `application/json` response with an already encoded body.
    public static func json(_ bytes: [UInt8], status: HTTPStatus = .ok) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: ["Content-Type": "application/json"], body: .bytes(bytes))
    }

    /// An error or status page: the code, reason phrase and an optional explanation, as text.
    public static func status(_ status: HTTPStatus, message: String? = nil) -> HTTPServerResponse {
        var response = text(
            "\(status.rawValue) \(status.reasonPhrase)\n" + (message.map { "\($0)\n" } ?? ""), status: status)
        response.statusMessage = message ?? ""
        return response
    }

    /// An error as JSON: `{"error": MESSAGE, "status": CODE}`, the message being the reason
    /// phrase when none is given.
    public static func jsonError(_ status: HTTPStatus, message: String? = nil) -> HTTPServerResponse {
        let text = message.flatMap { $0.isEmpty ? nil : $0 } ?? status.reasonPhrase
        let body = JSONWriter.bytes { writer in
            writer.beginObject()
            writer.field("error", text)
            writer.field("status", Int(status.rawValue))
            writer.endObject()
        }
        return .json(body, status: status)
    }

    /// This answer as JSON when it is an error or status page (``status(_:message:)``) with a
    /// status of 400 or more; otherwise unchanged. Header fields it set (`Allow`,
    /// `WWW-Authenticate`) are kept.
    func jsonIfError() -> HTTPServerResponse {
        guard let statusMessage, status.rawValue >= 400 else { return self }
        var response = HTTPServerResponse.jsonError(status, message: statusMessage)
        for (name, value) in headers where name.lowercased() != "content-type" { response.headers.add(name, value) }
        return response
    }

    /// A redirect to `location` (302 unless another 3xx is given).
    public static func redirect(to location: String, status: HTTPStatus = .found) -> HTTPServerResponse {
        var response = HTTPServerResponse.status(status)
        response.headers.add("Location", location)
        return response
    }
}

/// Thrown by a route handler to answer with `status` and a short text body.
public struct HTTPResponseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status to answer with.
    public let status: HTTPStatus
    /// An explanation for the client, or `nil`.
    public let message: String?

    /// An error that answers with `status` and, if given, `message` as the body.
    public init(_ status: HTTPStatus, message: String? = nil) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status)" + (message.map { ": \($0)" } ?? "") }
}
