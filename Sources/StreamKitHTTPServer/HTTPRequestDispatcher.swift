import StreamKitCore
import StreamKitHTTP

/// Everything between a parsed request and its handler: the Host check, CORS, OPTIONS, the access
/// token (``HTTPAccessControl``), routing. Decides on the event loop; task handlers then run off it.
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
    let access: HTTPAccessControl
    let logger: Logger
    /// Where errors are answered as JSON (``HTTPServerConfiguration/jsonErrorPathPrefixes``).
    let jsonErrorPathPrefixes: [String]

    /// A dispatcher; `readsNeedToken` for a server reachable from the network.
    init(
        router: HTTPRouter, hostPolicy: HTTPHostPolicy, allowedOrigins: [String], accessToken: String,
        readsNeedToken: Bool, jsonErrorPathPrefixes: [String] = [], logger: Logger
    ) {
        self.jsonErrorPathPrefixes = jsonErrorPathPrefixes
        self.router = router
        self.hostPolicy = hostPolicy
        self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
        self.access = HTTPAccessControl(
            token: accessToken, port: hostPolicy.port, readsNeedToken: readsNeedToken,
            allowedOrigins: self.allowedOrigins)
        self.logger = logger
    }

    func decide(_ request: HTTPServerRequest) -> Decision {
        let decision = decideAsText(request)
        guard jsonErrorPathPrefixes.contains(where: { request.head.path.hasPrefix($0) }) else { return decision }
        switch decision {
        case .respond(let response):
            return .respond(response.jsonIfError())
        case .runTask(let handler, let request):
            let logger = logger
            return .runTask(
                { request in
                    do {
                        return try await handler(request).jsonIfError()
                    } catch {
                        return Self.errorResponse(error, logger: logger, request: request).jsonIfError()
                    }
                }, request)
        }
    }

    private func decideAsText(_ request: HTTPServerRequest) -> Decision {
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
        // Before routing: on a server reachable from the network, even which paths exist is not
        // told without the token. Nothing here logs the target, which may carry the token.
        if let refusal = access.screen(head) {
            if refusal.status == .unauthorized {
                logger.info("refused a request without a valid token from \(request.remoteAddress)")
            }
            return .respond(refusal)
        }
        switch router.match(method: head.method, path: head.path) {
        case .notFound:
            return .respond(.status(.notFound))
        case .methodNotAllowed(let allowed):
            var response = HTTPServerResponse.status(.methodNotAllowed)
            response.headers.add("Allow", allowed.map(\.rawValue).joined(separator: ", "))
            return .respond(response)
        case .route(let route, let parameters):
            if let refusal = access.admit(head, routeRequiresToken: route.requiresToken) {
                return .respond(refusal)
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

    private static func response(
        from body: () throws -> HTTPServerResponse, logger: Logger, request: HTTPServerRequest
    ) -> HTTPServerResponse {
        do {
            return try body()
        } catch {
            return errorResponse(error, logger: logger, request: request)
        }
    }

    static func errorResponse(
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
