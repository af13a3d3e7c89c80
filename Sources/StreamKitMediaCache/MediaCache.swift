import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A byte-range cache of media fetched over HTTP: play online, seek anywhere, replay offline.
///
/// Each resource's bytes go to one sparse data file (written at their offsets), and an SQLite
/// index records which spans of it are cached (a range set), its length, validators, media type,
/// last access and pins. Reading a range yields disk bytes where cached and origin bytes (asked
/// for with Range, checked with If-Range) where not, writing them into the cache as they stream;
/// readers of the same resource share the fetches in flight, and a fetch nobody needs any more
/// (the player seeked away) is cancelled. Unpinned entries are evicted least recently used first
/// to stay under the byte cap; pinned entries and entries in use never are; a resource larger
/// than the cap streams through without being kept.
///
/// ```swift
/// let cache = try MediaCache(configuration: .init(directory: home + "/cache"))
/// let read = try await cache.read("https://example.com/talk.mp4", range: .closed(first: 0, last: 1_048_575))
/// for try await chunk in read.body { ... }
/// await cache.shutdown()
/// ```
///
/// One process at a time opens a cache directory (a lock file says which); the cache never
/// touches anything outside its directory.
public final class MediaCache: Sendable {
    /// The settings it was opened with.
    public let configuration: MediaCacheConfiguration
    /// What this process's caches send in `Via` with every request: `streamkit-` and a random
    /// value, so that a request that comes back to this process's proxy can be told.
    public static let requestMark = "streamkit-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    let store: CacheStore
    /// The HTTP client it fetches with (its own unless one was given).
    public let client: HTTPClient
    private let ownsClient: Bool
    /// `lock` in the directory, held while the cache is open.
    private let lock: ExclusiveFileLock
    private let registry = Mutex(Registry())

    private struct Registry {
        var coordinators: [String: (coordinator: ResourceCoordinator, leases: Int)] = [:]
        /// Keys whose first request is under way, with the reads waiting for its head.
        var probes: [String: [CheckedContinuation<Bool, Never>]] = [:]
        var drains: [Int: Task<Void, Never>] = [:]
        var nextDrain = 0
        var isShutDown = false
    }

    /// Opens (creating) the cache in the configuration's directory. Only the usage totals are read
    /// now: each entry is loaded from the index when first used, its file checked then (see
    /// ``repairs``), so that opening takes as long for a hundred thousand entries as for ten. The directory and its `data/` are made 0700, the
    /// index and every file the cache writes 0600 (``PrivateFiles``).
    ///
    /// - Parameters:
    ///   - configuration: The directory, the cap, the key function.
    ///   - client: The HTTP client to fetch with; the cache makes its own when `nil`.
    /// - Throws: ``MediaCacheError`` of kind `inUse` when another process has the directory open,
    ///   `storageFailed` when it cannot be created or the index cannot be opened.
    public init(configuration: MediaCacheConfiguration, client: HTTPClient? = nil) throws {
        var configuration = configuration
        // RFC 9110 §7.6.3: a proxy names itself in Via; the mark also lets the proxy routes
        // refuse a request this cache made (an origin redirecting it back to the proxy).
        configuration.requestHeaders.add("Via", "1.1 \(Self.requestMark)")
        self.configuration = configuration
        try? PrivateFiles.createDirectory(configuration.directory)
        PrivateFiles.restrictDirectory(configuration.directory)  // an older version's 0755
        let lockPath = configuration.directory + "/lock"
        do {
            lock = try ExclusiveFileLock(path: lockPath)
        } catch {
            switch error {
            case .held(let holder):
                throw MediaCacheError(
                    .inUse, subject: lockPath, detail: "another process (pid \(holder)) has the cache open")
            case .system(let failure):
                throw MediaCacheError(.storageFailed, subject: lockPath, detail: "\(failure)")
            }
        }
        store = try CacheStore(
            directory: configuration.directory, byteLimit: configuration.byteLimit,
            claimBatchBytes: configuration.claimBatchBytes, strayFileSweepDelay: configuration.strayFileSweepDelay,
            logger: configuration.logger)
        if let client {
            self.client = client
            ownsClient = false
        } else {
            var clientConfiguration = HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(15), idle: .seconds(30)),
                bodyBufferLimit: 1 << 20, receiveBufferSize: 256 << 10, logger: configuration.logger)
            clientConfiguration.destinationPolicy = configuration.destinationPolicy
            self.client = try HTTPClient(configuration: clientConfiguration)
            ownsClient = true
        }
    }

    /// Entries whose data files held less than the index claimed, and how many claimed bytes were
    /// dropped from each: each entry's file is checked when the entry is first used (read,
    /// written, pinned, or asked for with ``entry(for:)``) after the cache opens.
    public var repairs: [(key: String, droppedBytes: Int64)] { store.repairs }

    // MARK: Reading

    /// Reads `range` of `url` (the whole representation when `nil`) through the cache.
    ///
    /// Returns once the bytes can start flowing: at once for a known resource (no request to the
    /// origin is needed to describe it, so this works offline for what is cached), after the
    /// first response's head for a new one (whose length and validators it records).
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - range: The bytes wanted, as a Range specifier.
    /// - Returns: The metadata, the resolved range, and the body.
    /// - Throws: ``MediaCacheError``: `unsupportedURL`, `rangeNotSatisfiable` (with the length),
    ///   `originStatus` (404 and the like), `originFailed`.
    public func read(_ url: String, range: RangeRequest.Specifier? = nil) async throws -> MediaCacheRead {
        try Self.checkURL(url)
        let key = configuration.keyFunction.key(for: url)
        while true {
            if let snapshot = store.snapshot(forKey: key), let metadata = snapshot.metadata {
                let byteRange = try Self.resolve(range, length: metadata.length, url: url)
                let source: MediaCacheRead.Source =
                    snapshot.written.contains(byteRange)
                    ? .cache : (snapshot.written.intersection(byteRange).isEmpty ? .origin : .partial)
                let lease = try await openReader(key: key, url: url, metadata: metadata, range: byteRange)
                return MediaCacheRead(
                    metadata: metadata, range: byteRange, source: source,
                    body: MediaCacheBody(source: .cache(lease, byteRange)), passThroughMimeType: nil)
            }
            guard await beginProbe(key: key) else { continue }
            defer { endProbe(key: key) }
            return try await probe(key: key, url: url, range: range)
        }
    }

    /// The metadata of `url`: from the cache, else from a HEAD request to the origin (not
    /// recorded), or, from an origin that refuses HEAD (405, 501), from the head of a request for
    /// its first byte. `nil` when the origin does not tell the length.
    ///
    /// - Throws: ``MediaCacheError`` when the origin cannot be reached or answers with an error.
    public func metadata(for url: String) async throws -> MediaCacheMetadata? {
        try Self.checkURL(url)
        if let metadata = store.snapshot(forKey: configuration.keyFunction.key(for: url))?.metadata { return metadata }
        let head: HTTPClientResponseHead
        do {
            head = try await client.head(
                of: url, headers: configuration.requestHeaders, retry: configuration.retryPolicy)
        } catch {
            throw MediaCacheError.originFailure(error, url: url)
        }
        guard head.status.isSuccess else { throw MediaCacheError(.originStatus, subject: url, status: head.status) }
        return MediaCacheMetadata(head: head)
    }

    /// The metadata the cache holds for `url`, without asking the origin; `nil` when it has none.
    public func cachedMetadata(for url: String) -> MediaCacheMetadata? {
        store.snapshot(forKey: configuration.keyFunction.key(for: url))?.metadata
    }

    /// `range` of `url`'s data file, for sending with `sendfile`, when every byte of it is on
    /// disk; `nil` otherwise. The entry is in use (never evicted) until the region is released,
    /// when the response has been sent or dropped.
    public func cachedFileRegion(for url: String, range: ByteRange) -> HTTPFileRegion? {
        let key = configuration.keyFunction.key(for: url)
        let lease = CachedFileLease()
        let user = ObjectIdentifier(lease)
        let store = store
        guard let path = store.acquireCached(key: key, range: range, user: user, now: Date().timeIntervalSince1970)
        else { return nil }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            store.release(key: key, user: user, now: Date().timeIntervalSince1970)
            return nil
        }
        return HTTPFileRegion(takingOwnershipOf: descriptor, range: range) {
            // The lease lives as long as the region: its identity is the user's.
            withExtendedLifetime(lease) { store.release(key: key, user: user, now: Date().timeIntervalSince1970) }
        }
    }

    // MARK: Preloading

    /// Caches the first `byteCount` bytes of `url` (all of it when `nil`) ahead of playback.
    ///
    /// - Returns: How many of those bytes are cached afterwards (0 for a resource that streams
    ///   through: larger than the cap, or of unknown length).
    /// - Throws: ``MediaCacheError`` when the origin fails.
    @discardableResult
    public func preload(_ url: String, byteCount: Int64? = nil) async throws -> Int64 {
        if let byteCount, byteCount <= 0 { return 0 }
        let read = try await self.read(url, range: byteCount.map { .closed(first: 0, last: $0 - 1) })
        guard let range = read.range else { return 0 }
        switch read.body.source {
        case .origin:
            return 0
        case .cache(let lease, _):
            defer { lease.finish() }
            var position = range.lowerBound
            loop: while true {
                switch try await lease.coordinator.read(lease.reader, at: position) {
                case .bytes(let bytes): position += Int64(bytes.count)
                case .disk(let range, _): position = range.upperBound
                case .end: break loop
                }
            }
            let written = store.snapshot(forKey: configuration.keyFunction.key(for: url))?.written ?? ByteRangeSet()
            return written.intersection(range).reduce(0) { $0 + $1.count }
        }
    }

    // MARK: Entries

    /// Every entry, most recently used first.
    public func entries() -> [MediaCacheEntry] { store.entries() }

    /// The entry `url` is cached under, if any.
    public func entry(for url: String) -> MediaCacheEntry? {
        store.entry(forKey: configuration.keyFunction.key(for: url))
    }

    /// The cap on unpinned bytes now: the configuration's, or what ``setByteLimit(_:)`` set.
    public var byteLimit: Int64 { store.byteLimit }

    /// Changes the cap while the cache runs, evicting the least recently used unpinned entries
    /// down to it at once.
    ///
    /// - Throws: ``MediaCacheError`` of kind `invalidArgument` when `bytes` is not positive.
    public func setByteLimit(_ bytes: Int64) throws {
        guard bytes > 0 else {
            throw MediaCacheError(
                .invalidArgument, subject: "\(bytes)", detail: "the cap must be a positive number of bytes")
        }
        store.setByteLimit(bytes)
    }

    /// Bytes cached: of unpinned entries (what the cap bounds), and in all.
    public var usage: (unpinned: Int64, total: Int64) { store.usage }

    /// Removes the entry `url` is cached under (also found by the URL it was fetched from), with
    /// its file. Readers of it fail.
    ///
    /// - Returns: Whether there was such an entry.
    @discardableResult
    public func remove(_ url: String) async -> Bool {
        var keys = [configuration.keyFunction.key(for: url)]
        keys += store.keys(forURL: url).filter { $0 != keys[0] }
        var removed = false
        for key in keys {
            await retireCoordinator(key: key)
            if store.remove(key: key) { removed = true }
        }
        await store.removalsFinished()
        return removed
    }

    /// Removes every entry and file. Readers fail.
    ///
    /// - Returns: How many entries were removed.
    @discardableResult
    public func removeAll() async -> Int {
        let keys = registry.withLock { Array($0.coordinators.keys) }
        for key in keys { await retireCoordinator(key: key) }
        let count = store.removeAll()
        await store.removalsFinished()
        return count
    }

    // MARK: Pins

    /// Keeps `url`'s entry from eviction until every owner that pinned it unpins it; pinned bytes
    /// do not count against the cap. Pinning a URL not cached yet makes an empty entry that fills
    /// as it is read or preloaded (and is then kept even if larger than the cap).
    ///
    /// A download manager pins with its task id as `owner` and unpins when the task is removed.
    ///
    /// - Throws: ``MediaCacheError`` when the URL is not http(s) or the index cannot be written.
    public func pin(_ url: String, owner: String = "user") throws {
        try Self.checkURL(url)
        try store.pin(
            key: configuration.keyFunction.key(for: url), url: url, owner: owner,
            now: Date().timeIntervalSince1970)
    }

    /// Removes `owner`'s pin of `url`; the entry may be evicted once no pin is left (at once, if
    /// the cap is exceeded).
    ///
    /// - Returns: Whether `owner` had pinned it.
    @discardableResult
    public func unpin(_ url: String, owner: String = "user") -> Bool {
        store.unpin(key: configuration.keyFunction.key(for: url), owner: owner)
    }

    /// Removes every pin `owner` holds.
    ///
    /// - Returns: The keys it had pinned.
    @discardableResult
    public func unpinAll(owner: String) -> [String] { store.unpinAll(owner: owner) }

    // MARK: Events and lifetime

    /// A stream of what the cache does from now on: bytes stored (with the usage after each
    /// write), evictions, removals, invalidations. Ends when the cache shuts down.
    public func events() -> AsyncStream<MediaCacheEvent> { store.events() }

    /// Fails every read, stops every fetch, claims everything written, waits until the data files
    /// of removed entries are unlinked (done in the background), and closes the index and the
    /// directory lock.
    public func shutdown() async {
        let keys = registry.withLock { registry in
            registry.isShutDown = true
            return Array(registry.coordinators.keys)
        }
        for key in keys { await retireCoordinator(key: key) }
        let drains = registry.withLock { Array($0.drains.values) }
        for drain in drains { await drain.value }
        store.isClosing.store(true, ordering: .relaxed)
        store.claimAll()
        await store.removalsFinished()
        store.finishEvents()
        if ownsClient { await client.shutdown() }
        lock.release()
    }

    // MARK: Private

    static func resolve(_ range: RangeRequest.Specifier?, length: Int64, url: String) throws -> ByteRange {
        guard let range else { return ByteRange(0, length) }
        switch RangeRequest([range]).resolve(length: length) {
        case .satisfiable(let ranges) where ranges.count == 1:
            return ranges[0]
        default:
            throw MediaCacheError(.rangeNotSatisfiable, subject: url, length: length)
        }
    }

    /// Waits while another read of `key` makes the first request. True when this read is to make
    /// it now; false when it waited (the caller looks again).
    private func beginProbe(key: String) async -> Bool {
        enum Decision { case probe, wait }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let decision: Decision = registry.withLock { registry in
                if registry.probes[key] == nil {
                    registry.probes[key] = []
                    return .probe
                }
                registry.probes[key]!.append(continuation)
                return .wait
            }
            if decision == .probe { continuation.resume(returning: true) }
        }
    }

    private func endProbe(key: String) {
        let waiters = registry.withLock { $0.probes.removeValue(forKey: key) ?? [] }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// The first request for a resource the cache knows nothing about: its head tells the length
    /// and validators, and its body is adopted as the fetch of the bytes it carries.
    private func probe(key: String, url: String, range: RangeRequest.Specifier?) async throws -> MediaCacheRead {
        var request = HTTPClientRequest(url: url, headers: configuration.requestHeaders)
        request.range = range ?? .from(first: 0)
        request.bodyIsWrittenToFile = true  // adopted by a fetch, which writes it into the data file
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, retry: configuration.retryPolicy)
        } catch {
            throw MediaCacheError.originFailure(error, url: url)
        }
        let head = response.head
        let served: ByteRange?
        let readsWhole: Bool
        switch head.rangeOutcome {
        case .partial(let contentRange):
            served = contentRange.range
            readsWhole = false
        case .ignored:
            served = head.completeLength.map { ByteRange(0, $0) }
            readsWhole = true
        case .notSatisfiable(let length):
            throw MediaCacheError(.rangeNotSatisfiable, subject: url, length: length)
        case .notRequested, .notApplicable:
            throw MediaCacheError(.originStatus, subject: url, status: head.status)
        }
        guard let metadata = MediaCacheMetadata(head: head), let served else {
            // No length: the bytes cannot be placed, so they stream through.
            store.publishPassThrough(url: url, length: nil)
            let requested = served
            return MediaCacheRead(
                metadata: nil, range: requested, source: .passThrough,
                body: MediaCacheBody(source: .origin(response.body, skip: 0, limit: nil)),
                passThroughMimeType: head.headers["Content-Type"])
        }
        let requested = try Self.resolve(range, length: metadata.length, url: url)
        guard store.canKeep(key: key, length: metadata.length) else {
            store.publishPassThrough(url: url, length: metadata.length)
            let skip = requested.lowerBound - served.lowerBound
            return MediaCacheRead(
                metadata: metadata, range: requested, source: .passThrough,
                body: MediaCacheBody(source: .origin(response.body, skip: max(0, skip), limit: requested.count)),
                passThroughMimeType: nil)
        }
        try store.record(key: key, url: url, metadata: metadata, now: Date().timeIntervalSince1970)
        let lease = try await openReader(
            key: key, url: url, metadata: metadata, range: requested,
            adopting: (response, served, readsWhole))
        return MediaCacheRead(
            metadata: metadata, range: requested, source: .origin,
            body: MediaCacheBody(source: .cache(lease, requested)), passThroughMimeType: nil)
    }

    /// Registers a reader of `range` with the resource's coordinator (made if needed).
    private func openReader(
        key: String, url: String, metadata: MediaCacheMetadata, range: ByteRange,
        adopting adopted: (HTTPClientResponse, ByteRange, Bool)? = nil
    ) async throws -> ReaderLease {
        let coordinator = try acquireCoordinator(key: key, url: url, metadata: metadata)
        let reader = await coordinator.addReader(
            range: range, adopting: adopted.map { (response: $0.0, served: $0.1, readsWhole: $0.2) })
        return ReaderLease(coordinator: coordinator, reader: reader, url: url) { [weak self] in
            self?.releaseCoordinator(key: key, coordinator: coordinator)
        }
    }

    private func acquireCoordinator(
        key: String, url: String, metadata: MediaCacheMetadata
    ) throws
        -> ResourceCoordinator
    {
        try registry.withLock { registry throws(MediaCacheError) in
            guard !registry.isShutDown else {
                throw MediaCacheError(.removed, subject: url, detail: "the cache is closed")
            }
            if var entry = registry.coordinators[key] {
                entry.leases += 1
                registry.coordinators[key] = entry
                return entry.coordinator
            }
            guard let snapshot = store.snapshot(forKey: key), let path = snapshot.path else {
                throw MediaCacheError(.removed, subject: url, detail: "the entry was removed")
            }
            let coordinator = ResourceCoordinator(
                key: key, url: url, metadata: metadata, path: path, available: snapshot.written, store: store,
                client: client, configuration: configuration)
            store.acquire(key: key, user: ObjectIdentifier(coordinator), now: Date().timeIntervalSince1970)
            registry.coordinators[key] = (coordinator, 1)
            return coordinator
        }
    }

    /// A reader of `key` is done: when it was the last, the coordinator drains its fetches and
    /// lets the entry go (unless a new reader came meanwhile).
    private func releaseCoordinator(key: String, coordinator: ResourceCoordinator) {
        let drain: Int? = registry.withLock { registry in
            guard var entry = registry.coordinators[key], entry.coordinator === coordinator else { return nil }
            entry.leases -= 1
            registry.coordinators[key] = entry
            guard entry.leases == 0 else { return nil }
            defer { registry.nextDrain += 1 }
            return registry.nextDrain
        }
        guard let drain else { return }
        let store = store
        let task = Task { [weak self] in
            await coordinator.drain()
            guard let self else { return }
            self.registry.withLock { registry in
                registry.drains[drain] = nil
                guard let entry = registry.coordinators[key], entry.coordinator === coordinator, entry.leases == 0
                else { return }
                registry.coordinators[key] = nil
                store.release(key: key, user: ObjectIdentifier(coordinator), now: Date().timeIntervalSince1970)
            }
        }
        registry.withLock { $0.drains[drain] = task }
    }

    /// Stops the coordinator of `key`, if any, failing its readers, and forgets it.
    private func retireCoordinator(key: String) async {
        let coordinator = registry.withLock { $0.coordinators.removeValue(forKey: key)?.coordinator }
        guard let coordinator else { return }
        await coordinator.retire()
        store.release(key: key, user: ObjectIdentifier(coordinator), now: Date().timeIntervalSince1970)
    }
}

/// The identity of one response sending cached bytes straight from a data file.
private final class CachedFileLease: Sendable {}
