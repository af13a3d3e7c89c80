/// The head of a request as the server received it (RFC 9112 §3): request line and header fields.
public struct HTTPServerRequestHead: Hashable, Sendable {
    /// The protocol version of a request line (RFC 9112 §2.3). The server speaks 1.0 and 1.1.
    public struct Version: Hashable, Sendable, CustomStringConvertible {
        public let major: Int
        public let minor: Int

        public init(major: Int, minor: Int) {
            self.major = major
            self.minor = minor
        }

        public static let http10 = Version(major: 1, minor: 0)
        public static let http11 = Version(major: 1, minor: 1)

        public var description: String { "HTTP/\(major).\(minor)" }
    }

    /// The method token, as sent (methods are case-sensitive, RFC 9110 §9.1).
    public var method: HTTPMethod
    /// The request target exactly as sent: origin form `/path?query`, absolute form
    /// `http://host/path`, or `*` (RFC 9112 §3.2).
    public var target: String
    /// The protocol version.
    public var version: Version
    /// The header fields in the order received.
    public var headers: HTTPHeaders

    public init(method: HTTPMethod, target: String, version: Version = .http11, headers: HTTPHeaders = [:]) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// Whether the client allows the connection to stay open after the response (RFC 9112 §9.3):
    /// HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        let options = headers.listValues("Connection").map { $0.lowercased() }
        if options.contains("close") { return false }
        if version == .http11 { return true }
        return options.contains("keep-alive")
    }

    /// Whether the client waits for `100 Continue` before sending the body (RFC 9110 §10.1.1).
    public var expectsContinue: Bool {
        version == .http11 && headers["Expect"]?.lowercased() == "100-continue"
    }

    /// The path part of the target, still percent-encoded: `/a/b` for `/a/b?c` and for
    /// `http://host/a/b?c`; `*` for the asterisk form.
    public var path: String {
        var text = Substring(target)
        if let authority = Self.authorityStart(of: text) {
            let afterAuthority = text[authority...]
            text = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<query] }
        return text.isEmpty ? "/" : String(text)
    }

    /// The query after `?`, still percent-encoded, or `nil` when there is none.
    public var query: String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        let rest = target[target.index(after: mark)...]
        return String(rest.prefix { $0 != "#" })
    }

    /// The authority of an absolute-form target (`http://host:port/...`), which takes the place
    /// of the Host header (RFC 9112 §3.2.2); `nil` for the other forms.
    public var targetAuthority: String? {
        guard let authority = Self.authorityStart(of: Substring(target)) else { return nil }
        return String(target[authority...].prefix { $0 != "/" && $0 != "?" && $0 != "#" })
    }

    /// Where the authority begins in an absolute-form target (after `scheme://`).
    private static func authorityStart(of target: Substring) -> String.Index? {
        guard target.first != "/", let colon = target.firstIndex(of: ":") else { return nil }
        let rest = target[colon...]
        guard rest.hasPrefix("://") else { return nil }
        return target.index(colon, offsetBy: 3)
    }
}
