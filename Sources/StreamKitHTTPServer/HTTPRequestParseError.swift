import StreamKitCore
import StreamKitHTTP

/// Why the bytes on a connection are not a request the server can answer, with the status it
/// answers before closing the connection (RFC 9112 §2.2: a malformed message ends the connection).
///
/// Errors compare equal by kind; the detail is for logs.
public struct HTTPRequestParseError: KindedError {
    package enum Kind: Hashable, Sendable {
        case requestLineTooLong
        case headerSectionTooLarge
        case tooManyHeaderFields
        case malformedRequestLine
        case invalidMethod
        case invalidTarget
        case malformedVersion
        case unsupportedVersion
        case malformedHeaderField
        case obsoleteLineFolding
        case missingHost
        case duplicateHost
        case invalidContentLength
        case conflictingFraming
        case unsupportedTransferCoding
        case bodyTooLarge
        case malformedChunk
    }

    package let kind: Kind
    /// What was wrong, for logs: the offending text is cut to a few dozen characters.
    public let detail: String

    /// The status the server answers with.
    public var status: HTTPStatus {
        switch kind {
        case .requestLineTooLong: .uriTooLong
        case .headerSectionTooLarge, .tooManyHeaderFields: .requestHeaderFieldsTooLarge
        case .unsupportedVersion: HTTPStatus(505)
        case .unsupportedTransferCoding: HTTPStatus(501)
        case .bodyTooLarge: HTTPStatus(413)
        default: .badRequest
        }
    }

    public var description: String { "\(status.rawValue): \(detail)" }

    /// The request line is longer than the limit (RFC 9112 §3: answer 414).
    public static func requestLineTooLong(limit: Int) -> Self {
        Self(kind: .requestLineTooLong, detail: "request line longer than \(limit) bytes")
    }
    /// The header section is larger than the limit (RFC 6585 §5: 431).
    public static func headerSectionTooLarge(limit: Int) -> Self {
        Self(kind: .headerSectionTooLarge, detail: "header section larger than \(limit) bytes")
    }
    /// More header fields than the limit (431).
    public static func tooManyHeaderFields(limit: Int) -> Self {
        Self(kind: .tooManyHeaderFields, detail: "more than \(limit) header fields")
    }
    /// The request line is not `method SP target SP version`.
    public static func malformedRequestLine(_ line: String) -> Self {
        Self(kind: .malformedRequestLine, detail: "malformed request line '\(line.prefix(60))'")
    }
    /// The method is not a token (RFC 9110 §9.1).
    public static func invalidMethod(_ method: String) -> Self {
        Self(kind: .invalidMethod, detail: "invalid method '\(method.prefix(40))'")
    }
    /// The target has bytes outside visible ASCII, or is in no form the server accepts.
    public static func invalidTarget(_ target: String) -> Self {
        Self(kind: .invalidTarget, detail: "invalid request target '\(target.prefix(60))'")
    }
    /// The version is not `HTTP/DIGIT.DIGIT`.
    public static func malformedVersion(_ version: String) -> Self {
        Self(kind: .malformedVersion, detail: "malformed version '\(version.prefix(20))'")
    }
    /// A well-formed version other than 1.x (505).
    public static func unsupportedVersion(_ version: String) -> Self {
        Self(kind: .unsupportedVersion, detail: "unsupported version '\(version)'")
    }
    /// A field line that is not `token ":" value` with allowed value bytes.
    public static func malformedHeaderField(_ line: String) -> Self {
        Self(kind: .malformedHeaderField, detail: "malformed header field '\(line.prefix(60))'")
    }
    /// A field line starting with whitespace (obsolete folding, RFC 9112 §5.2).
    public static let obsoleteLineFolding = Self(kind: .obsoleteLineFolding, detail: "obsolete line folding")
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2).
    public static let missingHost = Self(kind: .missingHost, detail: "missing Host header")
    /// More than one Host field (RFC 9112 §3.2).
    public static let duplicateHost = Self(kind: .duplicateHost, detail: "more than one Host header")
    /// A Content-Length that is not one non-negative integer (RFC 9112 §6.3).
    public static func invalidContentLength(_ value: String) -> Self {
        Self(kind: .invalidContentLength, detail: "invalid Content-Length '\(value.prefix(40))'")
    }
    /// Transfer-Encoding with Content-Length, or in an HTTP/1.0 request, or not ending in
    /// chunked: the framing cannot be trusted (RFC 9112 §6.1, §6.3).
    public static func conflictingFraming(_ detail: String) -> Self { Self(kind: .conflictingFraming, detail: detail) }
    /// A transfer coding other than chunked (501, RFC 9112 §6.1).
    public static func unsupportedTransferCoding(_ coding: String) -> Self {
        Self(kind: .unsupportedTransferCoding, detail: "unsupported transfer coding '\(coding.prefix(40))'")
    }
    /// The body is larger than the limit (413).
    public static func bodyTooLarge(limit: Int64) -> Self {
        Self(kind: .bodyTooLarge, detail: "body larger than \(limit) bytes")
    }
    /// A chunk size line or chunk terminator that is not valid (RFC 9112 §7.1).
    public static func malformedChunk(_ detail: String) -> Self {
        Self(kind: .malformedChunk, detail: "malformed chunk: \(detail)")
    }
}
