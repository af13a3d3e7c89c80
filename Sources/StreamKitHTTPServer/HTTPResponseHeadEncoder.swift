/// Writes a response head (RFC 9112 §4, §6): status line, fields, blank line.
import StreamKitHTTP

enum HTTPResponseHeadEncoder {
    /// How the body's end is marked.
    enum Framing: Hashable, Sendable {
        /// `Content-Length: n`.
        case length(Int64)
        /// `Transfer-Encoding: chunked`.
        case chunked
        /// No framing field: a status without a body (1xx, 204, 304), or a body that ends when
        /// the connection closes (a stream to an HTTP/1.0 client).
        case none
    }

    /// The fields a handler may not set, because the server owns framing and connection state.
    private static let serverOwned = ["Content-Length", "Transfer-Encoding", "Connection", "Date"]

    /// Appends the head to `buffer`.
    ///
    /// - Parameters:
    ///   - keepAlive: Whether the connection stays open; `Connection: close` when not.
    ///   - announceKeepAlive: Whether to send `Connection: keep-alive` (HTTP/1.0 clients need it).
    ///   - date: The `Date` value (IMF-fixdate).
    ///   - extraHeaders: Fields the server adds (CORS).
    static func encode(
        status: HTTPStatus, headers: HTTPHeaders, framing: Framing, keepAlive: Bool, announceKeepAlive: Bool,
        date: String, serverName: String?, extraHeaders: [(String, String)], into buffer: inout [UInt8]
    ) {
        append("HTTP/1.1 ", to: &buffer)
        appendDecimal(Int64(status.rawValue), to: &buffer)
        buffer.append(0x20)
        append(status.reasonPhrase, to: &buffer)
        append("\r\nDate: ", to: &buffer)
        append(date, to: &buffer)
        if let serverName {
            append("\r\nServer: ", to: &buffer)
            append(serverName, to: &buffer)
        }
        for field in headers
        where isSafe(field.name, field.value)
            && !serverOwned.contains(where: { HTTPHeaders.equalNames($0, field.name) })
        {
            appendField(field.name, field.value, to: &buffer)
        }
        for (name, value) in extraHeaders { appendField(name, value, to: &buffer) }
        switch framing {
        case .length(let length):
            append("\r\nContent-Length: ", to: &buffer)
            appendDecimal(length, to: &buffer)
        case .chunked: appendField("Transfer-Encoding", "chunked", to: &buffer)
        case .none: break
        }
        if !keepAlive {
            appendField("Connection", "close", to: &buffer)
        } else if announceKeepAlive {
            appendField("Connection", "keep-alive", to: &buffer)
        }
        append("\r\n\r\n", to: &buffer)
    }

    /// Whether a field can be written as is: a token name and a value without CR, LF or NUL
    /// (a handler echoing client text must not be able to split the response).
    static func isSafe(_ name: String, _ value: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(HTTPRequestParser.isTokenByte)
            && !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    private static func appendField(_ name: String, _ value: String, to buffer: inout [UInt8]) {
        append("\r\n", to: &buffer)
        append(name, to: &buffer)
        append(": ", to: &buffer)
        append(value, to: &buffer)
    }

    private static func appendDecimal(_ value: Int64, to buffer: inout [UInt8]) {
        if value < 0 { buffer.append(0x2D) }
        let magnitude = value.magnitude
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            buffer.append(UInt8(48 + (magnitude / divisor) % 10))
            divisor /= 10
        }
    }

    private static func append(_ text: String, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: text.utf8)
    }
}
