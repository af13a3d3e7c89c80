import StreamKitHTTP

/// Whether a request comes from a web page of another site, which must not use the proxy, read
/// `/api/` or change state (docs/CLI.md, "serve"): a page could otherwise read the user's network
/// or queue through us, or act as the user. Browsers say where a request comes from in three headers, each sent by some browsers and
/// requests and not others, so each is checked: `Origin`, `Sec-Fetch-Site` and `Referer`. A request
/// with none of them (a player, a command-line tool) is allowed.
package struct CrossSiteCheck: Sendable {
    /// Web origins (`scheme://host[:port]`, lower-case) allowed besides the server's own.
    package let allowedOrigins: Set<String>

    package init(allowedOrigins: some Sequence<String>) {
        self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
    }

    /// Why the request is refused, or `nil` when it may be served.
    ///
    /// - Parameter value: The request's header of a name (`Origin`, `Sec-Fetch-Site`, `Referer`,
    ///   `Host`), case-insensitively.
    package func refusal(_ value: (String) -> String?) -> String? {
        let own = value("Host").map { "http://" + $0.lowercased() }
        func isAllowed(_ origin: String) -> Bool { origin == own || allowedOrigins.contains(origin) }
        let origin = value("Origin")?.lowercased()
        if let origin, !isAllowed(origin) { return "pages of other origins" }
        if let site = value("Sec-Fetch-Site")?.lowercased(), site == "cross-site" || site == "same-site",
            !(origin.map(isAllowed) ?? false)
        {
            return "pages of other sites"
        }
        if origin == nil, let referer = value("Referer") {
            guard let refererOrigin = Self.origin(of: referer), isAllowed(refererOrigin) else {
                return "pages of other sites (Referer)"
            }
        }
        return nil
    }

    /// `scheme://host[:port]` of an absolute http(s) URL, lower-case, the default port left out (as
    /// browsers serialize an origin); `nil` for anything else.
    package static func origin(of url: String) -> String? {
        let lowered = url.lowercased()
        let scheme: String
        let defaultPort: String
        if lowered.hasPrefix("http://") {
            (scheme, defaultPort) = ("http", "80")
        } else if lowered.hasPrefix("https://") {
            (scheme, defaultPort) = ("https", "443")
        } else {
            return nil
        }
        let rest = lowered.dropFirst(scheme.count + 3)
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" && $0 != "\\" }
        // A Referer carries no userinfo; one that does is not a browser's.
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        if authority.hasSuffix(":" + defaultPort) { authority = authority.dropLast(defaultPort.count + 1) }
        return scheme + "://" + authority
    }
}

extension CrossSiteCheck {
    /// The refusal for a request of the server, as a 403.
    package func check(_ request: HTTPServerRequest, serving what: String) throws(HTTPResponseError) {
        if let reason = refusal({ request.headers[$0] }) {
            throw HTTPResponseError(.forbidden, message: "\(what) does not serve \(reason)")
        }
    }
}
