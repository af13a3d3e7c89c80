import StreamKitCore

/// A failure of an RTMP session, with the context of what failed: the URL, the command, the
/// server's own text, the chunk stream.
///
/// Errors compare equal by ``kind``, wherever and with whatever text they happened.
public struct RTMPError: KindedError {
    /// What kind of failure it was; compare with the static members.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let invalidURL = Kind(rawValue: "invalid URL")
        public static let connectionFailed = Kind(rawValue: "connection failed")
        public static let connectTimedOut = Kind(rawValue: "connect timed out")
        public static let tlsHandshakeFailed = Kind(rawValue: "TLS handshake failed")
        public static let certificateRejected = Kind(rawValue: "certificate verify failed")
        public static let unsupported = Kind(rawValue: "not supported")
        public static let handshakeFailed = Kind(rawValue: "handshake failed")
        public static let handshakeTimedOut = Kind(rawValue: "handshake timed out")
        public static let protocolViolation = Kind(rawValue: "protocol violation")
        public static let malformedMessage = Kind(rawValue: "malformed message")
        public static let connectionClosed = Kind(rawValue: "connection closed")
        public static let connectionLost = Kind(rawValue: "connection lost")
        public static let idleTimeout = Kind(rawValue: "idle timeout")
        public static let responseTimeout = Kind(rawValue: "response timeout")
        public static let connectRejected = Kind(rawValue: "connect rejected")
        public static let streamNotFound = Kind(rawValue: "stream not found")
        public static let badName = Kind(rawValue: "bad stream name")
        public static let commandFailed = Kind(rawValue: "command failed")
        public static let invalidState = Kind(rawValue: "invalid state")
        public static let noMedia = Kind(rawValue: "no media")

        public var description: String { rawValue }
    }

    /// The kind of failure.
    public let kind: Kind
    /// What happened, naming the URL, stream, command or chunk stream involved.
    public let detail: String
    /// The status code the server sent (`NetStream.Play.StreamNotFound`), when it sent one.
    public let serverCode: String?
    /// The server's own description, when it sent one.
    public let serverDescription: String?

    init(_ kind: Kind, _ detail: String, serverCode: String? = nil, serverDescription: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.serverCode = serverCode
        self.serverDescription = serverDescription
    }

    /// The URL cannot be used: wrong scheme, no host, no application or stream.
    public static func invalidURL(_ url: String, _ reason: String) -> RTMPError {
        RTMPError(.invalidURL, "\(reason): \(url)")
    }

    /// TCP could not connect.
    public static func connectionFailed(host: String, port: UInt16, _ reason: String) -> RTMPError {
        RTMPError(.connectionFailed, "cannot connect to \(host):\(port): \(reason)")
    }

    /// TCP did not connect in time.
    public static func connectTimedOut(host: String, port: UInt16, after timeout: Duration) -> RTMPError {
        RTMPError(.connectTimedOut, "no TCP connection to \(host):\(port) within \(timeout)")
    }

    /// The TLS handshake of an `rtmps://` connection failed for another reason than the certificate.
    public static func tlsHandshakeFailed(host: String, port: UInt16, _ reason: String) -> RTMPError {
        RTMPError(.tlsHandshakeFailed, "\(host):\(port): \(reason)")
    }

    /// The server's certificate is not valid for the host, or not trusted.
    package static func certificateRejected(host: String, port: UInt16, _ problem: CertificateProblem) -> RTMPError {
        RTMPError(.certificateRejected, problem.message(host: host, port: port))
    }

    /// TLS failed on an open `rtmps://` connection (a bad record, an alert from the server).
    static func tlsConnectionLost(peer: String, _ reason: String) -> RTMPError {
        RTMPError(.connectionLost, "TLS with \(peer): \(reason)")
    }

    /// A feature this platform does not have (RTMPS where StreamKit has no TLS yet).
    public static func unsupported(_ feature: String) -> RTMPError {
        RTMPError(.unsupported, "\(feature) is not supported on this platform yet")
    }

    /// The server's handshake bytes are wrong.
    public static func handshakeFailed(_ reason: String) -> RTMPError { RTMPError(.handshakeFailed, reason) }

    /// The handshake did not complete in time.
    public static func handshakeTimedOut(after timeout: Duration, received: Int) -> RTMPError {
        RTMPError(
            .handshakeTimedOut, "the handshake did not complete within \(timeout) (received \(received) of 3073 bytes)")
    }

    /// The peer broke the chunk stream or control protocol.
    public static func protocolViolation(_ reason: String) -> RTMPError { RTMPError(.protocolViolation, reason) }

    /// A command or data message could not be decoded.
    public static func malformedMessage(_ reason: String) -> RTMPError { RTMPError(.malformedMessage, reason) }

    /// The peer closed the connection.
    public static func connectionClosed(_ context: String) -> RTMPError { RTMPError(.connectionClosed, context) }

    /// The connection failed (reset, broken pipe, ...).
    public static func connectionLost(_ error: SystemError) -> RTMPError {
        RTMPError(.connectionLost, error.description)
    }

    /// Nothing arrived for too long.
    public static func idleTimeout(_ waitingFor: String, after timeout: Duration) -> RTMPError {
        RTMPError(.idleTimeout, "nothing received for \(timeout) while waiting for \(waitingFor)")
    }

    /// The server did not answer a command in time.
    public static func responseTimeout(_ command: String, after timeout: Duration) -> RTMPError {
        RTMPError(.responseTimeout, "no answer to '\(command)' within \(timeout)")
    }

    /// The server refused `connect` (`NetConnection.Connect.Rejected` or `_error`).
    public static func connectRejected(application: String, code: String?, description: String?) -> RTMPError {
        RTMPError(
            .connectRejected, "the server rejected the connection to application '\(application)'",
            serverCode: code, serverDescription: description)
    }

    /// `NetStream.Play.StreamNotFound`.
    public static func streamNotFound(_ stream: String, code: String?, description: String?) -> RTMPError {
        RTMPError(.streamNotFound, "stream '\(stream)' not found", serverCode: code, serverDescription: description)
    }

    /// `NetStream.Publish.BadName` (the name is taken or not allowed).
    public static func badName(_ stream: String, code: String?, description: String?) -> RTMPError {
        RTMPError(
            .badName, "the server refused stream name '\(stream)'", serverCode: code, serverDescription: description)
    }

    /// Any other `_error` or error-level `onStatus`.
    public static func commandFailed(_ command: String, code: String?, description: String?) -> RTMPError {
        RTMPError(.commandFailed, "'\(command)' failed", serverCode: code, serverDescription: description)
    }

    /// A stream ended before any audio or video arrived.
    public static func noMedia(_ stream: String, _ reason: String) -> RTMPError {
        RTMPError(.noMedia, "stream '\(stream)' ended before any media arrived (\(reason))")
    }

    /// The API was used out of order (publishing before connecting, ...).
    public static func invalidState(_ reason: String) -> RTMPError { RTMPError(.invalidState, reason) }

    public var description: String {
        var text = "RTMP \(kind): \(detail)"
        if let serverCode { text += " [\(serverCode)]" }
        if let serverDescription, !serverDescription.isEmpty { text += ": \(serverDescription)" }
        return text
    }
}
