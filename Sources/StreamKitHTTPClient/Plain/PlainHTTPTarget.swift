import Foundation
import StreamKitHTTP

/// Where a plain `http` request goes and the bytes of its request head (RFC 9112 §3), for the
/// client's own connections (``PlainHTTPBackend``); `nil` for what those leave to libcurl.
///
/// Pure: no I/O. The head says what libcurl would say for the same request: the request target,
/// `Host`, `User-Agent`, `Accept: */*`, cookies, then the request's own fields (which replace the
/// defaults of the same name), Range and If-Range among them. It asks for no content coding, so
/// bodies arrive as stored.
struct PlainHTTPTarget: Hashable, Sendable {
    /// The connection's end: host (an IPv6 literal without brackets) and port.
    struct Origin: Hashable, Sendable {
        var host: String
        var port: Int
    }

    let origin: Origin
    /// `GET /path?query HTTP/1.1` and the fields, ending with the blank line.
    let head: [UInt8]

    /// The target for `request`, or `nil` when the request needs what only libcurl does here:
    /// another method than GET, a request body, https, user information in the URL, a host
    /// that is not ASCII.
    init?(request: HTTPClientRequest, userAgent: String) {
        guard request.method == .get, request.body == nil,
            let components = URLComponents(string: request.url),
            components.scheme?.lowercased() == "http", components.user == nil, components.password == nil,
            var host = components.percentEncodedHost, !host.isEmpty,
            host.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != 37 }),
            let fields = try? request.headerFieldsToSend()
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? 80
        guard (1...65535).contains(port) else { return nil }
        origin = Origin(host: host, port: port)

        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        if let query = components.percentEncodedQuery { path += "?" + query }
        guard path.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { return nil }
        let hostField = (host.contains(":") ? "[\(host)]" : host) + (port == 80 ? "" : ":\(port)")

        var text = "GET \(path) HTTP/1.1\r\n"
        func add(_ name: String, _ value: String) {
            guard !fields.contains(name) else { return }
            text += "\(name): \(value)\r\n"
        }
        add("Host", hostField)
        add("User-Agent", request.userAgent ?? userAgent)
        add("Accept", "*/*")
        if let cookies = request.cookieHeaderValue { add("Cookie", cookies) }
        for field in fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        head = Array(text.utf8)
    }
}
