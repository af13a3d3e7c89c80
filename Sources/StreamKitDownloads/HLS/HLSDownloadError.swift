import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// Why an HLS download failed, with what failed: the URL, the HTTP status, the package file.
///
/// Errors compare equal by kind; the rest is context. Everything fetched before a failure stays in
/// the package, so running the job again resumes it.
public struct HLSDownloadError: KindedError {
    /// What went wrong, without the context.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A playlist could not be fetched (after retries), or the server answered with an error status.
        public static let playlistUnavailable = Kind("playlist unavailable")
        /// The response is not an HLS playlist, or it does not parse.
        public static let invalidPlaylist = Kind("invalid playlist")
        /// No variant fits `--variant`.
        public static let noMatchingVariant = Kind("no matching variant")
        /// No rendition fits `--audio` or `--subs`.
        public static let noMatchingRendition = Kind("no matching rendition")
        /// A URI in a playlist is not http or https (`file://`, `ftp://`, an unknown scheme).
        public static let unsupportedURI = Kind("unsupported URI")
        /// A playlist lists more segments than ``HLSDownloadOptions/maximumSegments``.
        public static let tooManySegments = Kind("too many segments")
        /// A segment, map or key could not be fetched after retries.
        public static let fileFailed = Kind("file failed")
        /// A key is not 16 bytes.
        public static let invalidKey = Kind("invalid key")
        /// The server sent other bytes than a byte range asked for (a shorter resource, a moved range).
        public static let rangeMismatch = Kind("byte range mismatch")
        /// An AES-128 segment did not decrypt (bad padding: wrong key or IV, or a damaged segment).
        public static let decryptionFailed = Kind("decryption failed")
        /// `--decrypt` met an encryption it cannot undo: SAMPLE-AES in fragmented MP4 (`cbcs`) or in
        /// packed audio, or a SAMPLE-AES segment whose program tables cannot be rewritten.
        public static let unsupportedEncryption = Kind("unsupported encryption")
        /// A `--section` does not fit the stream (it starts after the end; more than one for a
        /// live recording), or an `--exclude-segments` pattern is not a regular expression.
        public static let invalidSegmentFilter = Kind("invalid segment filter")
        /// The package folder holds another package, or files that are not a package.
        public static let packageConflict = Kind("package conflict")
        /// Writing into the package failed (disk full, permissions).
        public static let writeFailed = Kind("write failed")
        /// The download was cancelled; its state is saved for a resume.
        public static let cancelled = Kind("cancelled")

        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// The URL that failed, when a request or a playlist entry is to blame.
    public let url: String?
    /// The HTTP status received, when one was.
    public let status: HTTPStatus?
    /// The package file concerned (relative to the package folder), when there is one.
    public let path: String?
    /// The explanation.
    public let detail: String
    /// The client's error, when a request failed.
    public let underlying: HTTPClientError?
    /// For `writeFailed`: the `errno` of the system call that failed (so that a full disk is told
    /// from other failures by its code, never by the message's text).
    package let errno: Int32?

    /// Creates an error of `kind` with its context.
    public init(
        _ kind: Kind, url: String? = nil, status: HTTPStatus? = nil, path: String? = nil, detail: String = "",
        underlying: HTTPClientError? = nil
    ) {
        self.init(
            kind, url: url, status: status, path: path, detail: detail, underlying: underlying,
            errno: underlying?.errno)
    }

    /// Writing a package file failed with `failure`; its `errno` is kept.
    package init(writeFailed failure: SystemError, url: String? = nil, path: String? = nil) {
        self.init(
            .writeFailed, url: url, status: nil, path: path, detail: "\(failure)", underlying: nil, errno: failure.code)
    }

    private init(
        _ kind: Kind, url: String?, status: HTTPStatus?, path: String?, detail: String, underlying: HTTPClientError?,
        errno: Int32?
    ) {
        self.kind = kind
        self.url = url
        self.status = status ?? underlying?.status
        self.path = path
        self.detail = detail
        self.underlying = underlying
        self.errno = errno
    }

    /// A cancelled download.
    public static let cancelled = HLSDownloadError(.cancelled, detail: "cancelled; the package state is saved")

    public var description: String {
        message("\(kind)", url.map { " for \($0)" }, status.map { " (HTTP \($0.rawValue))" })
    }
}
