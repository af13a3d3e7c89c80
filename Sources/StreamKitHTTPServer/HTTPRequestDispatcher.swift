import StreamKitCore
import StreamKitHTTP

/// Everything between a parsed request and its handler: the Host check, CORS, OPTIONS, routing,
/// and the access token. Decides on the event loop; task handlers then run off it.
struct HTTPRequestDispatcher: Sendable {
    /// What the connection does with a request.
    enum Decision: Sendable {
        /// Send this response now.
        case respond(HTTPServerResponse)
        /// Run the handler as a task and send what it returns.
        case runTask(HTTPRouter.Handler, HTTPServerRequest)
    }

    let router: HTTPRouter
    let hostPolicy: HTTPHostPolicy
    let allowedOrigins: Set<String>
    let accessToken: String
    let logger: Logger

    init(
        router: HTTPRouter, hostPolicy: HTTPHostPolicy, allowedOrigins: [String], accessToken: String, logger: Logger
    ) {
        self.router = router
        self.hostPolicy = hostPolicy
        self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
        self.accessToken = accessToken
        self.logger = logger
    }

    /// The names of the header fields a client may send with the token.
    static let tokenHeader = "X-StreamKit-Token"

    func decide(_ request: HTTPServerRequest) -> Decision {
        let head = request.head
        let host = head.targetAuthority ?? head.headers["Host"] ?? ""
        guard hostPolicy.allows(host) else {
            logger.info("refused request for host '\(host)' from \(request.remoteAddress)")
            return .respond(
                .status(
                    .misdirectedRequest,
                    message:
                        "'\(host.prefix(100))' is not this server's address; configure it as a host name to use it."
                ))
        }
        if head.method == .options {
            return .respond(options(request))
        }
        switch router.match(method: head.method, path: head.path) {
        case .notFound:
            return .respond(.status(.notFound))
        case .methodNotAllowed(let allowed):
            var response = HTTPServerResponse.status(.methodNotAllowed)
            response.headers.add("Allow", allowed.map(\.rawValue).joined(separator: ", "))
            return .respond(response)
        case .route(let route, let parameters):
            if route.requiresToken && !carriesToken(head.headers) {
                var response = HTTPServerResponse.status(
                    .unauthorized, message: "This route needs the server's access token.")
                response.headers.add("WWW-Authenticate", "Bearer realm=\"streamkit\"")
                return .respond(response)
            }
            var routed = request
            routed.rawRouteParameters = parameters
            switch route.handler {
            case .immediate(let handler):
                return .respond(Self.response(from: { try handler(routed) }, logger: logger, request: routed))
            case .task(let handler):
                return .runTask(handler, routed)
            }
        }
    }

    /// Runs a task handler, turning thrown errors into error responses.
    static func run(
        _ handler: HTTPRouter.Handler, _ request: HTTPServerRequest, logger: Logger
    ) async
        -> HTTPServerResponse
    {
        do {
            return try await handler(request)
        } catch {
            return errorResponse(error, logger: logger, request: request)
        }
    }

    /// The CORS fields for a response to `head` (RFC: Fetch standard, CORS protocol): only when
    /// its `Origin` is one of the allowed origins.
    func corsHeaders(for head: HTTPServerRequestHead) -> [(String, String)] {
        guard !allowedOrigins.isEmpty else { return [] }
        guard let origin = head.headers["Origin"], allowedOrigins.contains(origin.lowercased()) else {
            return [("Vary", "Origin")]
        }
        return [
            ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
            ("Access-Control-Expose-Headers", "Content-Length, Content-Range, Accept-Ranges, ETag, Last-Modified"),
        ]
    }

    // MARK: Private

    private func options(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let head = request.head
        let methods: [HTTPMethod]
        if head.target == "*" {
            methods = [.get, .head, .options]
        } else {
            methods = router.methods(forPath: head.path)
            guard !methods.isEmpty else { return .status(.notFound) }
        }
        let allow = (methods + (methods.contains(.options) ? [] : [.options])).map(\.rawValue).joined(separator: ", ")
        var response = HTTPServerResponse(status: .noContent, headers: ["Allow": allow])
        if let origin = head.headers["Origin"], allowedOrigins.contains(origin.lowercased()),
            head.headers.contains("Access-Control-Request-Method")
        {
            response.headers.add("Access-Control-Allow-Methods", allow)
            if let requested = head.headers["Access-Control-Request-Headers"] {
                response.headers.add("Access-Control-Allow-Headers", requested)
            }
            response.headers.add("Access-Control-Max-Age", "600")
        }
        return response
    }

    private func carriesToken(_ headers: HTTPHeaders) -> Bool {
        var presented: [String] = headers.values(Self.tokenHeader)
        for value in headers.values("Authorization") {
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2 && parts[0].lowercased() == "bearer" {
                presented.append(String(parts[1]).trimmingCharacters(in: " \t"))
            }
        }
        return presented.contains { Self.constantTimeEqual($0, accessToken) }
    }

    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    private static func response(
        from body: () throws -> HTTPServerResponse, logger: Logger, request: HTTPServerRequest
    ) -> HTTPServerResponse {
        do {
            return try body()
        } catch {
            return errorResponse(error, logger: logger, request: request)
        }
    }

    private static func errorResponse(
        _ error: any Error, logger: Logger, request: HTTPServerRequest
    )
        -> HTTPServerResponse
    {
        if let error = error as? HTTPResponseError {
            return .status(error.status, message: error.message)
        }
        logger.error("\(request.method) \(request.path) failed: \(error)")
        return .status(.internalServerError)
    }
}

extension HTTPStatus {
    /// 421: the request named a host this server does not answer for (RFC 9110 §15.5.20).
    public static let misdirectedRequest = HTTPStatus(421)
    /// 401: credentials (the access token) are missing or wrong (RFC 9110 §15.5.2).
    public static let unauthorized = HTTPStatus(401)
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        guard let first = firstIndex(where: { !characters.contains($0) }) else { return "" }
        let last = lastIndex(where: { !characters.contains($0) })!
        return String(self[first...last])
    }
}
