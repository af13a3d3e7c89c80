/// The head of a request as the server received it (RFC 9112 §3): request line and header fields.
import StreamKitHTTP

public struct HTTPServerRequestHead: Hashable, Sendable {
    /// The protocol version of a request line (RFC 9112 §2.3). The server speaks 1.0 and 1.1.
    public struct Version: Hashable, Sendable, CustomStringConvertible {
        /// The number before the dot.
        public let major: Int
        /// The number after the dot.
        public let minor: Int

        /// The version `HTTP/major.minor`.
        public init(major: Int, minor: Int) {
            self.major = major
            self.minor = minor
        }

        /// HTTP/1.0 (RFC 1945): no chunked bodies, connections close unless kept alive.
        public static let http10 = Version(major: 1, minor: 0)
        /// HTTP/1.1 (RFC 9112).
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

    /// A request head.
    public init(method: HTTPMethod, target: String, version: Version = .http11, headers: HTTPHeaders = [:]) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// Whether the client allows the connection to stay open after the response (RFC 9112 §9.3):
    /// HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        guard headers.contains("Connection") else { return version == .http11 }
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
        let utf8 = target.utf8
        var start = utf8.startIndex
        if utf8.first != 0x2F {
            guard let authority = Self.authorityStart(of: target) else { return target }
            guard let slash = utf8[authority...].firstIndex(of: 0x2F) else { return "/" }
            start = slash
        }
        guard let end = utf8[start...].firstIndex(where: { $0 == 0x3F || $0 == 0x23 }) else {
            return start == utf8.startIndex ? target : String(target[start...])
        }
        return end == start ? "/" : String(target[start..<end])
    }

    /// The query after `?`, still percent-encoded, or `nil` when there is none.
    public var query: String? {
        let utf8 = target.utf8
        guard let mark = utf8.firstIndex(of: 0x3F) else { return nil }
        let rest = utf8[utf8.index(after: mark)...]
        let end = rest.firstIndex(of: 0x23) ?? utf8.endIndex
        return String(target[rest.startIndex..<end])
    }

    /// The authority of an absolute-form target (`http://host:port/...`), which takes the place
    /// of the Host header (RFC 9112 §3.2.2); `nil` for the other forms.
    public var targetAuthority: String? {
        guard let authority = Self.authorityStart(of: target) else { return nil }
        return String(target[authority...].prefix { $0 != "/" && $0 != "?" && $0 != "#" })
    }

    /// Where the authority begins in an absolute-form target (after `scheme://`).
    private static func authorityStart(of target: String) -> String.Index? {
        let utf8 = target.utf8
        guard utf8.first != 0x2F, let colon = utf8.firstIndex(of: 0x3A) else { return nil }
        let rest = utf8[colon...]
        guard rest.starts(with: "://".utf8) else { return nil }
        return utf8.index(colon, offsetBy: 3)
    }
}
