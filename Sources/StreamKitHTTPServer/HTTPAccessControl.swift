import StreamKitHTTP

/// Who may use the server: the access token and, for requests that change state, the site they
/// come from. Decides only; ``HTTPRequestDispatcher`` sends what it returns.
///
/// The token comes in `Authorization: Bearer TOKEN`, `X-StreamKit-Token: TOKEN`, or the cookie
/// that a visit of any URL with `?token=TOKEN` sets (`HttpOnly; SameSite=Strict`, as Jupyter
/// does): that visit is answered with a redirect to the same URL without the token, so that the
/// token stays out of the history and of `Referer`. A server on loopback lets anyone read (players
/// need no token there); a server reachable from the network wants the token for every request.
/// A request that changes state (not GET, HEAD or OPTIONS) wants the token and must not come from
/// a page of another site: `SameSite=Strict` already keeps browsers from sending the cookie with
/// such requests, and the origin check stands even so.
struct HTTPAccessControl: Sendable {
    /// The name of the query parameter that carries the token in a URL.
    static let queryParameter = "token"
    /// The header field a client may send the token in, besides `Authorization: Bearer`.
    static let tokenHeader = "X-StreamKit-Token"

    let token: String
    /// The cookie's name, with the port: two servers on one host do not overwrite each other's.
    let cookieName: String
    /// Whether GET and HEAD need the token too (a server reachable from the network).
    let readsNeedToken: Bool
    /// Whose pages may change state: the server's own and the allowed origins.
    let sites: CrossSiteCheck

    init(token: String, port: UInt16, readsNeedToken: Bool, allowedOrigins: Set<String>) {
        self.token = token
        self.cookieName = Self.cookieName(port: port)
        self.readsNeedToken = readsNeedToken
        self.sites = CrossSiteCheck(allowedOrigins: allowedOrigins)
    }

    /// The name of the token cookie of the server on `port`.
    static func cookieName(port: UInt16) -> String { "streamkit-token-\(port)" }

    /// The answer to a request before it is routed, or `nil` to route it: the redirect that sets
    /// the cookie for a GET or HEAD with the right `?token=`, 401 for a wrong one, and 401 for a
    /// request without the token when reads need it.
    func screen(_ head: HTTPServerRequestHead) -> HTTPServerResponse? {
        if head.method == .get || head.method == .head, let query = head.query {
            let (presented, rest) = Self.splitToken(from: query)
            if !presented.isEmpty {
                guard presented.allSatisfy({ Self.constantTimeEqual($0, token) }) else {
                    return Self.unauthorized("The token in the URL is not this server's.")
                }
                return signIn(redirectingTo: Self.location(path: head.path, query: rest))
            }
        }
        if readsNeedToken && !carriesToken(head.headers) {
            return Self.unauthorized(
                "This server is reachable from the network: open the URL with ?token= it printed at start, "
                    + "or send Authorization: Bearer TOKEN.")
        }
        return nil
    }

    /// The answer to a routed request that may not run, or `nil` when it may: 401 without the
    /// token the route or the method requires, 403 for a state change from another site's page.
    func admit(_ head: HTTPServerRequestHead, routeRequiresToken: Bool) -> HTTPServerResponse? {
        if routeRequiresToken && !carriesToken(head.headers) {
            return Self.unauthorized("This route needs the server's access token.")
        }
        let changesState = !(head.method == .get || head.method == .head || head.method == .options)
        if changesState, let reason = sites.refusal({ head.headers[$0] }) {
            return .status(.forbidden, message: "Requests that change state are refused from \(reason).")
        }
        return nil
    }

    /// Whether the header fields carry the token, in any of the three places.
    func carriesToken(_ headers: HTTPHeaders) -> Bool {
        var presented: [Substring] = headers.values(Self.tokenHeader).map { $0[...] }
        for value in headers.values("Authorization") {
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2 && parts[0].lowercased() == "bearer" {
                presented.append(Self.trimmed(parts[1]))
            }
        }
        for value in headers.values("Cookie") {
            for pair in value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2 && Self.trimmed(parts[0]) == cookieName { presented.append(Self.trimmed(parts[1])) }
            }
        }
        return presented.contains { Self.constantTimeEqual($0, token) }
    }

    // MARK: Private

    /// 303 to `location` with the cookie; not cached, and no `Referer` from it.
    private func signIn(redirectingTo location: String) -> HTTPServerResponse {
        var response = HTTPServerResponse.redirect(to: location, status: HTTPStatus(303))
        response.headers.add("Set-Cookie", "\(cookieName)=\(token); HttpOnly; SameSite=Strict; Path=/")
        response.headers.add("Cache-Control", "no-store")
        response.headers.add("Referrer-Policy", "no-referrer")
        return response
    }

    private static func unauthorized(_ message: String) -> HTTPServerResponse {
        var response = HTTPServerResponse.status(.unauthorized, message: message)
        response.headers.add("WWW-Authenticate", "Bearer realm=\"streamkit\"")
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    /// The decoded values of the query's token parameters, and the query's other pairs as sent.
    static func splitToken(from query: String) -> (tokens: [String], rest: [Substring]) {
        var tokens: [String] = []
        var rest: [Substring] = []
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if ServerPercentDecoding.decodeString(parts[0], plusAsSpace: true) == queryParameter {
                // A value that does not decode cannot be the token (hex): it counts as a wrong one.
                let value = parts.count > 1 ? parts[1] : ""
                tokens.append(ServerPercentDecoding.decodeString(value, plusAsSpace: true) ?? "\u{FFFD}")
            } else {
                rest.append(pair)
            }
        }
        return (tokens, rest)
    }

    /// Where the sign-in redirect goes: the path and the other query pairs, as sent. A path
    /// starting `//` or `/\` would read as another host in `Location`, so it gets a `/.` first
    /// (the same path once dot segments are removed).
    static func location(path: String, query: [Substring]) -> String {
        let second = path.dropFirst().first
        let safePath = second == "/" || second == "\\" ? "/." + path : path
        return query.isEmpty ? safePath : safePath + "?" + query.joined(separator: "&")
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let whitespace: Set<Character> = [" ", "\t"]
        guard let first = text.firstIndex(where: { !whitespace.contains($0) }) else { return "" }
        let last = text.lastIndex(where: { !whitespace.contains($0) })!
        return text[first...last]
    }

    /// Compares in time that depends on the lengths only, not on where the bytes differ.
    static func constantTimeEqual(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
