import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// What the cache knows about a resource's representation: enough to answer a player's request
/// (length, type, validators) without asking the origin.
public struct MediaCacheMetadata: Hashable, Sendable {
    /// The representation's length in bytes.
    public var length: Int64
    /// The media type the origin gave (`video/mp4`), if any.
    public var mimeType: String?
    /// The origin's `ETag`, if any.
    public var entityTag: EntityTag?
    /// The origin's `Last-Modified`, if any.
    public var lastModified: Date?
    /// The validator gap fetches send in `If-Range`, if the origin gave one fit for it (a strong
    /// ETag, or a Last-Modified a second older than the response's Date).
    public var ifRange: HTTPClientRequest.IfRange?
    /// The URL the bytes came from, after redirects: what relative references resolve against.
    public var finalURL: String
}

extension MediaCacheMetadata {
    /// The metadata a response head announces, when it announces the whole length.
    init?(head: HTTPClientResponseHead) {
        guard let length = head.completeLength, !head.isContentEncoded else { return nil }
        self.init(
            length: length, mimeType: head.headers["Content-Type"], entityTag: head.entityTag,
            lastModified: head.lastModified, ifRange: head.ifRangeValidator, finalURL: head.url)
    }
}

/// One entry of the cache, as listed.
public struct MediaCacheEntry: Hashable, Sendable, Codable {
    /// The cache key (the URL, or what the key function made of it).
    public var key: String
    /// The URL last used to fetch it.
    public var url: String
    /// The data file's name inside the cache's `data` directory, once the first response came.
    public var fileName: String?
    /// The representation's length, once known.
    public var length: Int64?
    /// Bytes on disk.
    public var cachedBytes: Int64
    /// The media type.
    public var mimeType: String?
    /// The owners that pinned it (a download manager's task ids, `user`); empty when not pinned.
    public var pinnedBy: [String]
    /// When it was last read, in seconds since 1970.
    public var lastAccess: Double
    /// The cached byte ranges, `[[lower, upper], ...]`.
    public var spans: ByteRangeSet
    /// Whether readers or fetches of this process are using it (it cannot be evicted meanwhile).
    public var isInUse = false

    /// Whether something keeps it from eviction.
    public var isPinned: Bool { !pinnedBy.isEmpty }

    /// Whether every byte is on disk.
    public var isComplete: Bool { length.map { $0 > 0 && cachedBytes >= $0 } ?? false }

    /// The share of the representation on disk, 0 to 100 (0 while the length is unknown).
    public var cachedPercent: Double {
        guard let length, length > 0 else { return 0 }
        return Double(cachedBytes) * 100 / Double(length)
    }
}

/// Something the cache did, delivered on ``MediaCache/events()``.
public enum MediaCacheEvent: Hashable, Sendable {
    /// Bytes of `key` were written, after which `unpinnedBytes` (what the cap bounds) and
    /// `totalBytes` are cached.
    case stored(key: String, range: ByteRange, unpinnedBytes: Int64, totalBytes: Int64)
    /// An entry was evicted to make room, freeing `bytes`.
    case evicted(key: String, bytes: Int64)
    /// An entry was removed on request.
    case removed(key: String)
    /// The origin's representation changed; the old bytes were dropped.
    case invalidated(key: String)
    /// At start-up, bytes the index claimed but the file does not hold were dropped.
    case repaired(key: String, droppedBytes: Int64)
    /// A resource larger than the cap was streamed without being kept.
    case passedThrough(url: String, length: Int64?)
}

/// Why a cache operation failed, with what it was about.
public struct MediaCacheError: KindedError {
    /// What went wrong.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The URL is not http or https, or not a URL.
        public static let unsupportedURL = Kind("unsupported URL")
        /// The requested range starts past the end.
        public static let rangeNotSatisfiable = Kind("range not satisfiable")
        /// The origin answered with a status that carries no representation (404, 5xx).
        public static let originStatus = Kind("origin status")
        /// The origin could not be reached, or its response broke off.
        public static let originFailed = Kind("origin failed")
        /// The destination policy refused the origin's address (or a redirect's): nothing was fetched.
        public static let destinationRefused = Kind("destination refused")
        /// The origin's representation changed while it was being read.
        public static let representationChanged = Kind("representation changed")
        /// The resource was removed, or the cache shut down, while it was being read.
        public static let removed = Kind("removed")
        /// Another process has the cache open.
        public static let inUse = Kind("in use")
        /// The disk or the index failed.
        public static let storageFailed = Kind("storage failed")
        /// An argument is out of range (a cap that is not positive).
        public static let invalidArgument = Kind("invalid argument")
        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// The URL or path concerned.
    public let subject: String
    /// The origin's status, for ``Kind-swift.struct/originStatus``.
    public let status: HTTPStatus?
    /// The length of the representation, for ``Kind-swift.struct/rangeNotSatisfiable``.
    public let length: Int64?
    /// The explanation.
    public let detail: String

    init(_ kind: Kind, subject: String, status: HTTPStatus? = nil, length: Int64? = nil, detail: String = "") {
        self.kind = kind
        self.subject = subject
        self.status = status
        self.length = length
        self.detail = detail
    }

    public var description: String { message("\(kind): \(subject)", status.map { " (HTTP \($0.rawValue))" }) }
}

extension MediaCacheError {
    /// The error for a request to the origin of `url` that failed with `error`: `destinationRefused`
    /// when the client's destination policy refused it, else `originFailed`.
    static func originFailure(_ error: any Error, url: String) -> MediaCacheError {
        if let error = error as? HTTPClientError, error.kind == .destinationRefused {
            return MediaCacheError(.destinationRefused, subject: url, detail: error.detail)
        }
        return MediaCacheError(.originFailed, subject: url, detail: "\(error)")
    }
}

/// Part of a cache's entries, with the totals of all of them.
public struct MediaCacheListing: Hashable, Sendable {
    /// The entries listed, most recently used first.
    public var entries: [MediaCacheEntry]
    /// How many entries the cache has.
    public var entryCount: Int
    /// The bytes all of them claim.
    public var cachedBytes: Int64
}

/// How a ``MediaCache`` stores and fetches.
public struct MediaCacheConfiguration: Sendable {
    /// The cache's directory: `index.sqlite`, `data/`, and a lock file. Nothing outside it is touched.
    public var directory: String
    /// The most bytes kept of resources nobody pinned (1 GiB by default). Pinned bytes are outside
    /// the cap: what a user chose to keep stays until unpinned.
    public var byteLimit: Int64
    /// What a URL is cached under.
    public var keyFunction: MediaCacheKeyFunction
    /// Extra headers sent to the origin with every request (a `User-Agent`, a cookie).
    public var requestHeaders: HTTPHeaders
    /// Retries of a request that gets no usable head (transport failures, 408, 429, 5xx).
    public var retryPolicy: HTTPClientRetryPolicy
    /// How a reader waits for fetches in flight, and how many fetches run at once.
    public var readerJoinDistance: Int64
    /// Beyond ``readerJoinDistance``, how long a reader may expect to wait for a fetch in flight
    /// before it starts one of its own (a seek).
    public var readerJoinWait: Duration
    /// The most fetches in flight for one resource.
    public var maximumFetchesPerResource: Int
    /// Unclaimed bytes after which the index is brought up to date (it also is every half second
    /// of writing, when a fetch ends, and when the cache closes).
    public var claimBatchBytes: Int64
    /// How long after the cache opens the data files no entry names (left by a crash, or put
    /// there by hand) are deleted, in the background; `nil`: never. The delay spares a short-lived
    /// process (a CLI command) a walk through the whole data directory.
    public var strayFileSweepDelay: Duration?
    /// Where the cache reports.
    public var logger: Logger
    /// Which addresses the cache's own client may connect to (``HTTPClientConfiguration``'s
    /// destination policy); `nil` allows every one. Not used with a client given to the cache.
    package var destinationPolicy: DestinationPolicy?

    /// A configuration for a cache in `directory`.
    public init(
        directory: String, byteLimit: Int64 = 1 << 30, keyFunction: MediaCacheKeyFunction = .url,
        requestHeaders: HTTPHeaders = [:], logger: Logger = .disabled
    ) {
        self.directory = directory
        self.byteLimit = byteLimit
        self.keyFunction = keyFunction
        self.requestHeaders = requestHeaders
        self.retryPolicy = HTTPClientRetryPolicy(maximumAttempts: 3)
        self.readerJoinDistance = 2 << 20
        self.readerJoinWait = .milliseconds(500)
        self.maximumFetchesPerResource = 6
        self.claimBatchBytes = 8 << 20
        self.strayFileSweepDelay = .seconds(2)
        self.logger = logger
    }

    var stateMachineConfiguration: ResourceFetchStateMachine.Configuration {
        var configuration = ResourceFetchStateMachine.Configuration()
        configuration.joinDistance = readerJoinDistance
        configuration.joinWait = readerJoinWait
        configuration.maximumConcurrentFetches = maximumFetchesPerResource
        return configuration
    }
}
