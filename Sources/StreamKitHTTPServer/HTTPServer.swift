import StreamKitCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// StreamKit's HTTP/1.1 server: non-blocking sockets on a few event-loop threads (epoll on Linux,
/// kqueue on Darwin), keep-alive and pipelining, `sendfile` for files, chunked streaming bodies
/// with backpressure, request limits and timeouts, Host checking, CORS for named origins, and an
/// access token for routes that change state, and for every route when the server is reachable
/// from the network (``HTTPAccessControl``).
///
/// ```swift
/// var router = HTTPRouter()
/// router.get("/hello") { _ in .text("hello\n") }
/// let server = try HTTPServer.start(configuration: .init(port: 0), router: router)
/// print(server.baseURL)  // http://127.0.0.1:PORT/
/// await server.shutdown()
/// ```
///
/// Starting the server ignores `SIGPIPE` for the process: `sendfile` to a socket the client
/// closed would otherwise kill it (Linux has no per-call flag for `sendfile`). It also raises the
/// process's soft descriptor limit toward the hard one, so that the connection limit can be reached. The server's
/// threads run until ``shutdown(gracePeriod:)``; dropping the last reference does not stop them.
public final class HTTPServer: Sendable {
    /// The address the server listens on, as text (`127.0.0.1`, `::1`).
    public let host: String
    /// The port it listens on (the one picked, when started with port 0).
    public let port: UInt16
    /// The token routes that change state require (and every route, when the server is
    /// reachable from the network), in `Authorization: Bearer TOKEN`, `X-StreamKit-Token: TOKEN`,
    /// or the cookie that a visit of ``signInURL`` sets.
    public let accessToken: String
    /// Whether the server listens on an address other machines can reach; every request then
    /// needs the token, reads included.
    public let isReachableFromNetwork: Bool

    private let context: ServerContext
    private let loops: [ServerEventLoop]
    private let lifecycle: ServerLifecycle
    private let urlHost: String

    private init(
        host: String, urlHost: String, port: UInt16, accessToken: String, reachable: Bool, context: ServerContext,
        loops: [ServerEventLoop], lifecycle: ServerLifecycle
    ) {
        self.host = host
        self.urlHost = urlHost
        self.port = port
        self.accessToken = accessToken
        self.isReachableFromNetwork = reachable
        self.context = context
        self.loops = loops
        self.lifecycle = lifecycle
    }

    /// `http://HOST:PORT/`, with `127.0.0.1` for a wildcard address.
    public var baseURL: String { "http://\(urlHost):\(port)/" }

    /// ``baseURL`` with `?token=TOKEN`: opened in a browser, it sets the token cookie and
    /// redirects to ``baseURL``. Print it once; do not log it.
    public var signInURL: String { baseURL + "?token=" + accessToken }

    /// The name of the cookie that carries the token: `streamkit-token-PORT`.
    public var tokenCookieName: String { HTTPAccessControl.cookieName(port: port) }

    /// Connections open now.
    public var connectionCount: Int { context.openConnections.load(ordering: .relaxed) }

    /// Binds, listens and starts the event loops.
    ///
    /// - Parameters:
    ///   - configuration: Address, limits, timeouts, allowed hosts and origins.
    ///   - router: The routes.
    ///   - logger: Where the server reports refused hosts, handler failures and warnings.
    /// - Returns: The running server.
    /// - Throws: ``HTTPServerError/invalidAddress(_:)`` for a host that is not an address;
    ///   ``SystemError`` when the socket cannot be bound (the port is taken, say).
    public static func start(
        configuration: HTTPServerConfiguration, router: HTTPRouter, logger: Logger = .disabled
    ) throws -> HTTPServer {
        guard let address = ServerSocket.Address(configuration.host) else {
            throw HTTPServerError.invalidAddress(configuration.host)
        }
        signal(SIGPIPE, SIG_IGN)
        let (listener, port) = try ServerSocket.listen(on: address, port: configuration.port, backlog: 1024)
        let reachable = !address.isLoopback
        if reachable {
            logger.warning(
                "listening on \(address.urlHost):\(port), reachable from other machines; only loopback addresses are private"
            )
        }
        let token = configuration.accessToken ?? randomToken()
        let dispatcher = HTTPRequestDispatcher(
            router: router,
            hostPolicy: HTTPHostPolicy(listening: address, port: port, hostNames: configuration.hostNames),
            allowedOrigins: configuration.allowedOrigins, accessToken: token, readsNeedToken: reachable,
            jsonErrorPathPrefixes: configuration.jsonErrorPathPrefixes, logger: logger)
        var maximumConnections = max(1, configuration.maximumConnections)
        if let descriptors = ServerDescriptorLimit.raise() {
            let capacity = ServerDescriptorLimit.connectionCapacity(descriptors: descriptors)
            if capacity < maximumConnections {
                logger.warning(
                    "the descriptor limit (\(descriptors)) allows \(capacity) connections, not \(maximumConnections); idle ones are closed beyond it"
                )
                maximumConnections = capacity
            }
        }
        let context = ServerContext(
            configuration: configuration, maximumConnections: maximumConnections, dispatcher: dispatcher, logger: logger
        )
        let count = max(1, configuration.eventLoopCount)
        let lifecycle = ServerLifecycle(running: count)
        var loops: [ServerEventLoop] = []
        do {
            for index in 0..<count {
                loops.append(try ServerEventLoop(index: index, context: context) { lifecycle.loopStopped() })
            }
            try loops[0].poller.add(
                listener, token: ServerEventLoop.listenerToken, interest: .read, trigger: .level)
        } catch {
            close(listener)
            throw error
        }
        loops[0].listener = listener
        loops[0].peers = loops
        loops.forEach { $0.start() }
        let urlHost = address.isWildcard ? (address.family == .ipv4 ? "127.0.0.1" : "[::1]") : address.urlHost
        return HTTPServer(
            host: address.text, urlHost: urlHost, port: port, accessToken: token, reachable: reachable,
            context: context, loops: loops, lifecycle: lifecycle)
    }

    /// Stops accepting, closes idle connections, lets responses in flight finish for up to
    /// `gracePeriod`, then closes what is left. Returns when every loop has stopped.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        beginShutdown(gracePeriod: gracePeriod)
        await waitUntilStopped()
    }

    /// Starts the shutdown ``shutdown(gracePeriod:)`` describes without waiting for it. Calling
    /// it again with a shorter grace period brings the deadline forward.
    public func beginShutdown(gracePeriod: Duration = .seconds(10)) {
        let deadline = ContinuousClock.now + gracePeriod
        for loop in loops { loop.post(.shutdown(deadline: deadline)) }
    }

    /// Returns once the server has stopped.
    public func waitUntilStopped() async {
        await lifecycle.waitUntilStopped()
    }

    /// 128 random bits as hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }
}

/// Counts running loops and wakes whoever waits for all to stop.
final class ServerLifecycle: Sendable {
    private struct State {
        var running: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(running: Int) {
        state = Mutex(State(running: running))
    }

    func loopStopped() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    func waitUntilStopped() async {
        await withCheckedContinuation { continuation in
            let stopped = state.withLock { state -> Bool in
                if state.running == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if stopped { continuation.resume() }
        }
    }
}
