import StreamKitCore
import StreamKitHTTP

/// A response body produced while it is sent.
///
/// The producer writes chunks through an ``HTTPBodyWriter``; each write returns once the
/// connection has room for more (its unsent bytes are under the server's high-water mark), so a
/// producer never runs ahead of a slow client. When the client goes away, the producer's task is
/// cancelled and the pending and every later write throw ``HTTPServerError/connectionClosed``.
public struct HTTPBodyStream: Sendable {
    let produce: @Sendable (HTTPBodyWriter) async throws -> Void

    /// A body written by `produce`. Throwing ends the response abruptly (the connection closes
    /// without the last chunk, so the client sees a truncated body, never a complete-looking one).
    public init(_ produce: @escaping @Sendable (HTTPBodyWriter) async throws -> Void) {
        self.produce = produce
    }

    /// A body made of the chunks of an asynchronous sequence, pulled one at a time as the
    /// connection drains.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == [UInt8] {
        self.produce = { writer in
            for try await chunk in chunks { try await writer.write(chunk) }
        }
    }
}

/// Where a streaming body's producer writes its chunks.
public struct HTTPBodyWriter: Sendable {
    let sink: any HTTPBodySink

    init(sink: any HTTPBodySink) { self.sink = sink }

    /// Sends `bytes` as the next part of the body; returns when the connection can take more.
    ///
    /// - Throws: ``HTTPServerError/connectionClosed`` when the client has gone or the server stopped.
    public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await sink.write(.bytes(bytes))
    }

    /// Sends the bytes of `region` as the next part of the body, with `sendfile` (no copy through
    /// this process); returns when the connection can take more. The region (and its descriptor)
    /// is kept until its last byte is sent; a file shorter than the region ends the connection.
    ///
    /// - Throws: ``HTTPServerError/connectionClosed`` when the client has gone or the server stopped.
    public func write(_ region: HTTPFileRegion) async throws {
        guard !region.range.isEmpty else { return }
        try await sink.write(.file(region))
    }
}

/// A part of a streaming body on its way to the connection.
enum HTTPBodyPart: Sendable {
    case bytes([UInt8])
    case file(HTTPFileRegion)

    var count: Int64 {
        switch self {
        case .bytes(let bytes): Int64(bytes.count)
        case .file(let region): region.range.count
        }
    }
}

/// The connection end of a body writer.
protocol HTTPBodySink: Sendable {
    func write(_ part: HTTPBodyPart) async throws
}

/// Failures of the server itself, as opposed to a client's malformed request.
public struct HTTPServerError: KindedError {
    package enum Kind: Hashable, Sendable {
        case connectionClosed
        case invalidAddress
    }

    package let kind: Kind
    /// What it was about, such as the address that did not parse.
    public let detail: String

    public var description: String { detail }

    /// The connection a streaming body was written to has closed.
    public static let connectionClosed = Self(kind: .connectionClosed, detail: "the connection closed")
    /// The address to listen on is not an IPv4 or IPv6 address or `localhost`.
    public static func invalidAddress(_ host: String) -> Self {
        Self(kind: .invalidAddress, detail: "'\(host)' is not an IP address or localhost")
    }
}
