/// An `rtmp://` or `rtmps://` URL split the way the connect and play/publish commands need it.
///
/// `rtmp://host[:port]/app[/instance...]/stream[?query]`: the stream name is the last path
/// segment (with the query string, which servers read as stream arguments, such as a key); the
/// application is everything before it, instances and slashes included, and may carry a query
/// string of its own (`rtmp://host/app?token=abc/stream`). The port defaults to 1935, and to 443
/// for `rtmps://` (RTMP over TLS).
/// A query string on the stream name must not itself contain a slash. A fragment (`#...`) is
/// dropped; credentials (`user:password@host`) are refused, as RTMP has no place for them.
public struct RTMPURL: Hashable, Sendable, CustomStringConvertible {
    /// The default RTMP port.
    public static let defaultPort: UInt16 = 1935
    /// The default RTMPS port.
    public static let defaultSecurePort: UInt16 = 443

    /// The host name or address (without brackets for IPv6).
    public var host: String
    /// The TCP port.
    public var port: UInt16
    /// The application, sent as `app` in `connect` (`live`, `live/_definst_`, `app?token=abc`).
    public var application: String
    /// The stream name, sent in `play` and `publish` (`stream`, `stream?key=abc`).
    public var streamName: String
    /// Whether the connection runs over TLS (`rtmps://`).
    public var isSecure: Bool
    private let authority: String

    /// Parses `string`.
    ///
    /// - Throws: ``RTMPError`` (invalid URL) for another scheme, a missing host, application or stream.
    public init(_ string: String) throws(RTMPError) {
        let schemeEnd = string.firstRange(of: "://")
        guard let schemeEnd else { throw .invalidURL(string, "not a URL") }
        let scheme = string[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "rtmp" || scheme == "rtmps" else {
            throw .invalidURL(string, "scheme '\(scheme)' is not supported (only rtmp:// and rtmps://)")
        }
        isSecure = scheme == "rtmps"
        // A fragment is never sent to a server.
        let rest = string[schemeEnd.upperBound..<(string.firstIndex(of: "#") ?? string.endIndex)]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        authority = String(rest[..<slash])
        if authority.contains("@") {
            // Not echoed: the URL holds a password.
            throw .invalidURL(
                "\(scheme)://…@" + rest[rest.index(after: rest[..<slash].lastIndex(of: "@")!)...],
                "credentials (user:password@) are not supported in \(scheme):// URLs")
        }
        let path = slash < rest.endIndex ? String(rest[rest.index(after: slash)...]) : ""

        var hostPart = Substring(authority)
        var portPart: Substring?
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else {
                throw .invalidURL(string, "unterminated IPv6 address")
            }
            let after = hostPart[hostPart.index(after: close)...]
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
            if after.hasPrefix(":") {
                portPart = after.dropFirst()
            } else if !after.isEmpty {
                throw .invalidURL(string, "unexpected text after the IPv6 address")
            }
        } else if let colon = hostPart.lastIndex(of: ":") {
            portPart = hostPart[hostPart.index(after: colon)...]
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty else { throw .invalidURL(string, "no host") }
        host = String(hostPart)
        if let portPart {
            guard let value = UInt16(portPart), value > 0 else { throw .invalidURL(string, "bad port '\(portPart)'") }
            port = value
        } else {
            port = isSecure ? Self.defaultSecurePort : Self.defaultPort
        }

        // The stream is the last segment; a query string on it belongs to it.
        let queryStart = path.firstIndex(of: "?")
        let searchEnd = queryStart ?? path.endIndex
        var streamStart = path[..<searchEnd].lastIndex(of: "/")
        if let queryStart, streamStart == nil || path[queryStart...].contains("/") {
            // A query before the last slash belongs to the application (`app?token=abc/stream`).
            streamStart = path.lastIndex(of: "/")
        }
        guard let streamStart else { throw .invalidURL(string, "no stream name after the application") }
        application = String(path[..<streamStart])
        streamName = String(path[path.index(after: streamStart)...])
        guard !application.isEmpty, !application.hasPrefix("/") else { throw .invalidURL(string, "no application") }
        guard !streamName.isEmpty, !streamName.hasPrefix("?") else { throw .invalidURL(string, "no stream name") }
    }

    /// The `tcUrl` of `connect`: the URL up to and including the application.
    public var tcURL: String { "\(isSecure ? "rtmps" : "rtmp")://\(authority)/\(application)" }

    /// The URL as given, rebuilt from its parts.
    public var description: String { "\(tcURL)/\(streamName)" }
}
