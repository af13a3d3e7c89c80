import StreamKitHTTP

/// What a transfer over the client's own connection (``PlainHTTPTransfer``) does with a
/// response, decided from its head: read a body of known length, or up to the close, then keep
/// or close the connection; or hand the request to libcurl, which sends it again and reads what
/// this path does not (RFC 9112 §6.3, the message body length).
///
/// Pure: no I/O. The transfer's thread only carries the plan out.
enum PlainHTTPResponsePlan: Hashable, Sendable {
    /// Why a response is left to libcurl.
    enum HandOffReason: Hashable, Sendable {
        /// A redirect libcurl follows (and keeps the hops' history of).
        case redirect
        /// A transfer coding (`chunked` and the rest): this path reads only plain bodies.
        case transferCoding
        /// A content coding the request asks to have decoded.
        case contentCoding
        /// A `Content-Length` that is not a number.
        case unparsableContentLength
        /// `Content-Length` fields that disagree.
        case conflictingContentLengths
    }

    /// Where the body ends.
    enum BodyLength: Hashable, Sendable {
        /// After this many bytes (0: there is no body).
        case bytes(Int64)
        /// When the server closes the connection.
        case untilClose
    }

    /// What becomes of the connection once the body was read to its end.
    enum ConnectionAfterBody: Hashable, Sendable {
        /// Kept for the origin's next request.
        case keep
        /// Closed.
        case close
    }

    /// libcurl sends the request again; the origin's later requests go to libcurl directly, so
    /// that they do not cost two requests each.
    case handToLibcurl(HandOffReason)
    /// This transfer reads the body, then keeps or closes the connection.
    case read(BodyLength, then: ConnectionAfterBody)

    /// The plan for a redirect head that just ended.
    ///
    /// - Parameters:
    ///   - head: The redirect's head.
    ///   - request: The request it answers.
    ///   - defaultRedirectLimit: The client's redirect limit, for a request that sets none.
    /// - Returns: A hand-off when libcurl would follow the redirect; `nil` when the redirect is
    ///   itself the final response (redirects are not followed, or there is no `Location`), whose
    ///   body is planned by ``init(head:request:bytesWithHead:)``.
    init?(redirect head: HTTPClientResponseHeadParser.Head, request: HTTPClientRequest, defaultRedirectLimit: Int) {
        guard max(0, request.redirectLimit ?? defaultRedirectLimit) > 0, head.headers["Location"] != nil else {
            return nil
        }
        self = .handToLibcurl(.redirect)
    }

    /// The plan for the final response's head.
    ///
    /// - Parameters:
    ///   - head: The final head.
    ///   - request: The request it answers.
    ///   - bytesWithHead: The bytes received after the head in the same reads.
    init(head: HTTPClientResponseHead, request: HTTPClientRequest, bytesWithHead: Int) {
        if head.headers["Transfer-Encoding"] != nil {
            self = .handToLibcurl(.transferCoding)
        } else if head.isContentEncoded && request.decodesContent {
            self = .handToLibcurl(.contentCoding)
        } else if head.headers["Content-Length"] != nil && head.contentLength == nil {
            self = .handToLibcurl(.unparsableContentLength)
        } else if Set(head.headers.values("Content-Length")).count > 1 {
            self = .handToLibcurl(.conflictingContentLengths)
        } else {
            let length = Self.bodyLength(of: head)
            self = .read(length, then: Self.connectionAfterBody(of: head, length: length, bytesWithHead: bytesWithHead))
        }
    }

    /// None for 1xx, 204 and 304; else `Content-Length`, or up to the close without one.
    private static func bodyLength(of head: HTTPClientResponseHead) -> BodyLength {
        if head.status.rawValue < 200 || head.status == .noContent || head.status == .notModified { return .bytes(0) }
        return head.contentLength.map { .bytes($0) } ?? .untilClose
    }

    /// Kept when the body ends where announced, on an HTTP/1.1 connection the server does not
    /// close; closed when bytes past the body came with the head (the server sent more than it
    /// announced).
    private static func connectionAfterBody(
        of head: HTTPClientResponseHead, length: BodyLength, bytesWithHead: Int
    ) -> ConnectionAfterBody {
        guard case .bytes(let count) = length, bytesWithHead <= count else { return .close }
        let closes = head.headers.listValues("Connection").contains { $0.lowercased() == "close" }
        return !closes && head.version == "1.1" ? .keep : .close
    }
}
