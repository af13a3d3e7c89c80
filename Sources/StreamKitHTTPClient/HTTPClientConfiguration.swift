import Foundation
import StreamKitCore

/// What an ``HTTPClient`` does for every request unless the request says otherwise.
public struct HTTPClientConfiguration: Sendable {
    /// Whether TLS certificates and host names are checked.
    public enum TLSVerification: Hashable, Sendable {
        /// Check the certificate chain and the host name (the default).
        case verify
        /// Accept any certificate. Only for explicit opt-in (tests, self-signed origins).
        case insecureSkipVerification
    }

    /// The `User-Agent` sent when a request names none.
    public var userAgent: String
    /// Default timeouts.
    public var timeouts: HTTPClientTimeouts
    /// Default redirect limit.
    public var redirectLimit: Int
    /// TLS verification; on unless explicitly turned off.
    public var tlsVerification: TLSVerification
    /// Which proxy to use.
    public var proxy: HTTPClientProxy
    /// The environment the proxy variables are read from (the process's by default).
    public var environment: [String: String]
    /// At most this many connections to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`); more
    /// transfers wait for a free connection instead of opening new ones.
    public var maximumConnectionsPerHost: Int
    /// At most this many connections in all (`CURLMOPT_MAX_TOTAL_CONNECTIONS`).
    public var maximumConnections: Int
    /// A receive-rate limit shared by every transfer of this client, in bytes a second.
    public var globalReceiveRate: Int64?
    /// The most body bytes buffered for a consumer before the transfer is paused (a consumer that
    /// holds the body whole, ``HTTPClient/data(for:limit:retry:)`` or
    /// ``HTTPClientResponse/Body/collect(upTo:)``, buffers up to its own limit instead).
    public var bodyBufferLimit: Int
    /// libcurl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`), 16 KB to 512 KB.
    public var receiveBufferSize: Int
    /// How retries wait and draw jitter; replaceable in tests.
    public var retryTiming: HTTPClientRetryTiming
    /// Where the client logs.
    public var logger: Logger
    /// What carries the requests.
    public var backend: Backend
    /// Which addresses the client may connect to, checked on each address it is about to connect
    /// to (after DNS, at every redirect); `nil` allows every one. With a proxy, that is the
    /// proxy's address. URLSession cannot enforce it: a client with a policy refuses that backend.
    package var destinationPolicy: DestinationPolicy?
    /// For tests: called with every address a connection is about to be made to (after the
    /// destination policy allowed it); `false` refuses it as the policy would, so no connection
    /// is made. Lets a test record connects and keep them all on loopback.
    package var connectHook: (@Sendable (IPAddress) -> Bool)?

    /// What carries an ``HTTPClient``'s requests.
    public enum Backend: Hashable, Sendable {
        /// libcurl where it is available (Linux), URLSession elsewhere.
        case automatic
        /// libcurl's multi interface on one I/O thread; Linux only.
        case libcurl
        /// URLSession with a streaming delegate: the Apple platforms' backend. On Linux it runs
        /// on FoundationNetworking, slower and without connection statistics (PLATFORM.md).
        case urlSession
    }

    /// Creates a configuration with the defaults.
    public init(
        userAgent: String = "StreamKit/0.1", timeouts: HTTPClientTimeouts = HTTPClientTimeouts(),
        redirectLimit: Int = 10, tlsVerification: TLSVerification = .verify, proxy: HTTPClientProxy = .environment,
        environment: [String: String] = ProcessInfo.processInfo.environment, maximumConnectionsPerHost: Int = 8,
        maximumConnections: Int = 256, globalReceiveRate: Int64? = nil, bodyBufferLimit: Int = 512 << 10,
        receiveBufferSize: Int = 128 << 10, retryTiming: HTTPClientRetryTiming = .live, logger: Logger = .disabled,
        backend: Backend = .automatic
    ) {
        self.userAgent = userAgent
        self.timeouts = timeouts
        self.redirectLimit = redirectLimit
        self.tlsVerification = tlsVerification
        self.proxy = proxy
        self.environment = environment
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.maximumConnections = maximumConnections
        self.globalReceiveRate = globalReceiveRate
        self.bodyBufferLimit = bodyBufferLimit
        self.receiveBufferSize = receiveBufferSize
        self.retryTiming = retryTiming
        self.logger = logger
        self.backend = backend
    }
}

/// The proxy an ``HTTPClient`` sends requests through.
public enum HTTPClientProxy: Hashable, Sendable {
    /// From the standard variables: `http_proxy` for http (lower case only, as curl does, because
    /// CGI servers set `HTTP_PROXY` from a request header), `HTTPS_PROXY`/`https_proxy` for https,
    /// `ALL_PROXY`/`all_proxy` for both, minus the hosts in `NO_PROXY`/`no_proxy`.
    case environment
    /// No proxy, whatever the environment says.
    case none
    /// This proxy URL (`http://host:port`, `socks5h://host:port`), bypassed for the `noProxy` hosts.
    case url(String, noProxy: String? = nil)

    /// The proxy URL and bypass list for a request to `url`; `nil` proxy means a direct connection.
    ///
    /// - Parameters:
    ///   - url: The request URL.
    ///   - environment: The variables to read for ``environment``.
    /// - Returns: The proxy URL (or `nil`) and the `NO_PROXY` list to hand to libcurl.
    public func resolve(for url: String, environment: [String: String]) -> (proxy: String?, noProxy: String?) {
        switch self {
        case .none:
            return (nil, nil)
        case .url(let proxy, let noProxy):
            return (proxy, noProxy)
        case .environment:
            func variable(_ names: String...) -> String? {
                names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
            }
            let scheme = url.prefix(while: { $0 != ":" }).lowercased()
            let proxy =
                (scheme == "https" ? variable("https_proxy", "HTTPS_PROXY") : variable("http_proxy"))
                ?? variable("all_proxy", "ALL_PROXY")
            return (proxy, variable("no_proxy", "NO_PROXY"))
        }
    }
}
