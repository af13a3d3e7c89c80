/// How an ``HTTPServer`` listens, what it accepts, and how long it waits.
///
/// The defaults are for a media server on the user's own machine: loopback only, no CORS,
/// limits that stop slow or idle clients from holding the server.
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on: an IPv4 or IPv6 literal, or `localhost`. Anything but a
    /// loopback address makes the server reachable from the network; the server logs a warning
    /// and wants the access token for every request, reads included.
    public var host: String
    /// Whether ``host`` is a loopback address (an invalid one counts as loopback: it binds
    /// nothing). A server on any other address is reachable from other machines.
    public var isLoopbackOnly: Bool { ServerSocket.Address(host)?.isLoopback ?? true }
    /// The port; 0 picks a free one (read it from ``HTTPServer/port``).
    public var port: UInt16
    /// Event-loop threads; each owns its connections. At least 1.
    public var eventLoopCount: Int
    /// Connections open at once. A new connection beyond it closes the connection idle the
    /// longest (between requests, nothing being sent); with none idle it is answered 503.
    public var maximumConnections: Int
    /// Connections open at once from one client address (an IPv6 client by its /64). A new one
    /// beyond it closes that client's connection idle the longest, or is answered 503 when all of
    /// that client's are busy. Every local client shares 127.0.0.1, so this caps them together:
    /// it is set far above what players open (a few connections each) and below
    /// ``maximumConnections``, so that one address cannot hold every slot with busy connections.
    public var maximumConnectionsPerClient: Int
    /// Request size limits (414, 431, 413 beyond them).
    public var limits: HTTPRequestParser.Limits
    /// A connection with no request in progress is closed after this.
    public var idleTimeout: Duration
    /// A request's head and body must arrive within this (408 and close after it).
    public var requestTimeout: Duration
    /// A response that cannot send a byte for this long is abandoned.
    public var sendTimeout: Duration
    /// Host names besides the listening address, `localhost` and the loopback literals that
    /// requests may name in `Host` (a defence against DNS rebinding: a page on another site
    /// resolving its own name to 127.0.0.1 sends its own name in `Host`, and is refused).
    public var hostNames: [String]
    /// Origins (`http://example.com:8080`) whose pages may read responses (CORS). Empty: none.
    public var allowedOrigins: [String]
    /// The token that state-changing routes require (and every route off loopback); a random
    /// one when `nil`.
    public var accessToken: String?
    /// Unsent bytes a streaming body may queue before its producer waits.
    public var streamHighWaterMark: Int
    /// The `Server` header value; none when `nil`.
    public var serverName: String?
    /// The kernel send buffer of each connection (`SO_SNDBUF`); the kernel sizes it itself
    /// (up to 4 MiB on Linux) when `nil`. A small one bounds what a stalled client can hold.
    public var socketSendBufferSize: Int?
    /// Path prefixes (such as `/api/`) under which error answers are JSON, `{"error": MESSAGE,
    /// "status": CODE}`, for scripts: the server's own refusals (token, host, method, no route)
    /// and every ``HTTPResponseError`` or ``HTTPServerResponse/status(_:message:)`` a handler
    /// gives. Elsewhere they are text.
    public var jsonErrorPathPrefixes: [String] = []

    /// A configuration; every parameter is described by the property of the same name.
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, eventLoopCount: Int = HTTPServerConfiguration.defaultLoopCount,
        maximumConnections: Int = 1024, maximumConnectionsPerClient: Int = 512,
        limits: HTTPRequestParser.Limits = .init(),
        idleTimeout: Duration = .seconds(60), requestTimeout: Duration = .seconds(10),
        sendTimeout: Duration = .seconds(60), hostNames: [String] = [], allowedOrigins: [String] = [],
        accessToken: String? = nil, streamHighWaterMark: Int = 256 * 1024, serverName: String? = "StreamKit"
    ) {
        self.host = host
        self.port = port
        self.eventLoopCount = eventLoopCount
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.limits = limits
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.sendTimeout = sendTimeout
        self.hostNames = hostNames
        self.allowedOrigins = allowedOrigins
        self.accessToken = accessToken
        self.streamHighWaterMark = streamHighWaterMark
        self.serverName = serverName
    }

    /// Whether `host` is something the server can listen on: an IPv4 or IPv6 literal, or `localhost`.
    public static func isValidHost(_ host: String) -> Bool { ServerSocket.Address(host) != nil }

    /// One loop per core, at most 4: a media server is bound by the disk and the network long
    /// before more threads would help.
    public static var defaultLoopCount: Int { max(1, min(4, systemProcessorCount())) }
}
