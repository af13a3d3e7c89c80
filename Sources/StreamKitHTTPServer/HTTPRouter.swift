/// The routes of a server: method and path pattern to handler.
///
/// Routes are tried in the order they were added; the first whose method and pattern match
/// answers. A HEAD request falls back to the GET route (the server sends the head without the
/// body). A path some route matches with another method gets 405 with `Allow`; no match, 404.
///
/// Routes that change state need the server's access token: every route whose method is not
/// GET, HEAD or OPTIONS requires it, whatever `requiresToken` says, and GET routes can ask for it
/// too. GET routes must therefore be safe (RFC 9110 §9.2.1): a web page can make a browser send
/// them, and the token is the only thing a page cannot know. The others are also refused to pages
/// of other sites, token or not (``HTTPAccessControl``).
import StreamKitHTTP

public struct HTTPRouter: Sendable {
    /// A handler that runs as a task, off the event loop: anything that waits (network, disk
    /// scans, locks) belongs here. The task is cancelled if the client disconnects first.
    public typealias Handler = @Sendable (HTTPServerRequest) async throws -> HTTPServerResponse
    /// A handler that runs on the event-loop thread, for answers that never wait: in-memory data
    /// and local file metadata (opening and `fstat` of a file, as static file servers do). It
    /// saves a hop to the task pool per request.
    public typealias ImmediateHandler = @Sendable (HTTPServerRequest) throws -> HTTPServerResponse

    enum HandlerKind: Sendable {
        case task(Handler)
        case immediate(ImmediateHandler)
    }

    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: HTTPRoutePattern
        let requiresToken: Bool
        let handler: HandlerKind
    }

    /// The outcome of looking a request up.
    enum Match: Sendable {
        case route(Route, parameters: [(name: String, value: String)])
        case notFound
        case methodNotAllowed(allowed: [HTTPMethod])
    }

    private(set) var routes: [Route] = []

    /// A router with no routes.
    public init() {}

    /// Adds a route whose handler runs as a task.
    ///
    /// - Parameters:
    ///   - method: The method it answers.
    ///   - pattern: The path pattern, see ``HTTPRoutePattern``.
    ///   - requiresToken: Whether the request must carry the access token; always true for
    ///     methods other than GET, HEAD and OPTIONS.
    ///   - handler: Makes the response.
    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, requiresToken: Bool = false, handler: @escaping Handler
    ) {
        append(method, pattern, requiresToken, .task(handler))
    }

    /// Adds a route whose handler runs on the event loop; see ``ImmediateHandler`` for when
    /// that is right.
    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, requiresToken: Bool = false,
        runsOnEventLoop handler: @escaping ImmediateHandler
    ) {
        append(method, pattern, requiresToken, .immediate(handler))
    }

    /// Adds a GET route (HEAD is answered by it too).
    public mutating func get(_ pattern: String, requiresToken: Bool = false, handler: @escaping Handler) {
        add(.get, pattern, requiresToken: requiresToken, handler: handler)
    }

    /// Adds a POST route; it requires the access token.
    public mutating func post(_ pattern: String, handler: @escaping Handler) {
        add(.post, pattern, handler: handler)
    }

    /// Adds a PUT route; it requires the access token.
    public mutating func put(_ pattern: String, handler: @escaping Handler) {
        add(.put, pattern, handler: handler)
    }

    /// Adds a PATCH route; it requires the access token.
    public mutating func patch(_ pattern: String, handler: @escaping Handler) {
        add(.patch, pattern, handler: handler)
    }

    /// Adds a DELETE route; it requires the access token.
    public mutating func delete(_ pattern: String, handler: @escaping Handler) {
        add(.delete, pattern, handler: handler)
    }

    /// Adds every route of `other` after this router's own.
    public mutating func append(contentsOf other: HTTPRouter) {
        routes += other.routes
    }

    private mutating func append(_ method: HTTPMethod, _ pattern: String, _ requiresToken: Bool, _ kind: HandlerKind) {
        let safe = method == .get || method == .head || method == .options
        routes.append(
            Route(
                method: method, pattern: HTTPRoutePattern(pattern), requiresToken: requiresToken || !safe,
                handler: kind))
    }

    /// The route for `method` and the raw `path`.
    func match(method: HTTPMethod, path: String) -> Match {
        var allowed: [HTTPMethod] = []
        var fallback: (Route, [(name: String, value: String)])?
        let segments = HTTPRoutePattern.segments(of: path)
        for route in routes {
            guard let parameters = route.pattern.match(segments: segments) else { continue }
            if route.method == method { return .route(route, parameters: parameters) }
            if method == .head && route.method == .get && fallback == nil { fallback = (route, parameters) }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if let fallback { return .route(fallback.0, parameters: fallback.1) }
        guard !allowed.isEmpty else { return .notFound }
        if allowed.contains(.get) && !allowed.contains(.head) { allowed.append(.head) }
        return .methodNotAllowed(allowed: allowed)
    }

    /// The methods some route answers for `path`, for `Allow` and CORS preflight.
    func methods(forPath path: String) -> [HTTPMethod] {
        var methods: [HTTPMethod] = []
        for route in routes where route.pattern.match(path) != nil && !methods.contains(route.method) {
            methods.append(route.method)
        }
        if methods.contains(.get) && !methods.contains(.head) { methods.append(.head) }
        return methods
    }
}
