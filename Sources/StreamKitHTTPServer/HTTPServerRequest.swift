/// A complete request as a route handler sees it: the head, the whole body, where it came from,
/// and the values its route pattern captured.
import StreamKitHTTP

public struct HTTPServerRequest: Sendable {
    /// The request line and header fields.
    public var head: HTTPServerRequestHead
    /// The body, complete (bodies are bounded by ``HTTPRequestParser/Limits/maximumBodyLength``).
    public var body: [UInt8]
    /// The client's address, `127.0.0.1:54321` or `[::1]:54321`.
    public var remoteAddress: String
    /// The values of the route pattern's `:name` and `*name` segments, still percent-encoded,
    /// in pattern order.
    public internal(set) var rawRouteParameters: [(name: String, value: String)]

    /// A request, as the server builds it (and tests do).
    public init(
        head: HTTPServerRequestHead, body: [UInt8] = [], remoteAddress: String = "",
        rawRouteParameters: [(name: String, value: String)] = []
    ) {
        self.head = head
        self.body = body
        self.remoteAddress = remoteAddress
        self.rawRouteParameters = rawRouteParameters
    }

    /// The method.
    public var method: HTTPMethod { head.method }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }
    /// The path, still percent-encoded.
    public var path: String { head.path }
    /// The query, still percent-encoded, or `nil`.
    public var query: String? { head.query }

    /// The route parameter `name` as sent (percent-encoded), or `nil` when the pattern has none.
    public func rawRouteParameter(_ name: String) -> String? {
        rawRouteParameters.first { $0.name == name }?.value
    }

    /// The route parameter `name`, percent-decoded; `nil` when absent or not valid UTF-8 once decoded.
    public func routeParameter(_ name: String) -> String? {
        rawRouteParameter(name).flatMap { ServerPercentDecoding.decodeString($0) }
    }

    /// The query's `name=value` pairs, decoded as a form (`+` is a space); pairs that do not
    /// decode are left out.
    public var queryItems: [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = ServerPercentDecoding.decodeString(parts[0], plusAsSpace: true),
                let value = ServerPercentDecoding.decodeString(parts.count > 1 ? parts[1] : "", plusAsSpace: true)
            else { return nil }
            return (name, value)
        }
    }

    /// The first value of the query item `name`, decoded.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}
