import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cache's bookkeeping: the index, which bytes each data file holds, the byte budget and
/// eviction, pins, and which entries are in use. One lock; every operation is short (no network,
/// at most a file deletion or an index update), so callers on any thread may use it.
///
/// Eviction's victims are picked by ``EvictionPolicy`` from the entries; the store deletes them.
///
/// The rule that makes a crash harmless: bytes are written to the data file first, and only then
/// claimed in the index (in batches: every ``MediaCacheConfiguration/claimBatchBytes``, every half
/// second of writing, and when a reader or fetch ends). A process killed in between leaves the
/// index claiming less than the file holds, never more; start-up repairs what a damaged or
/// truncated file no longer holds.
final class CacheStore: Sendable {
    /// One resource while the store knows it.
    private struct Entry {
        /// As the index has it (its spans: what the index claims).
        var record: CacheRecord
        /// What is on disk: the claimed spans and any written since the last claim.
        var written: ByteRangeSet
        /// The coordinators holding it (it cannot be evicted while any does).
        var users: Set<ObjectIdentifier> = []
        /// Bytes reserved for writes under way.
        var reserved: Int64 = 0
        /// Bytes written and not yet claimed.
        var unclaimedBytes: Int64 = 0
        var lastClaim: ContinuousClock.Instant = .now
        /// The last access the index was last told (NaN: not known to be saved).
        var savedLastAccess = Double.nan

        var isPinned: Bool { !record.pins.isEmpty }
        var usage: Int64 { written.byteCount + reserved }

        /// The entry as eviction sees it.
        var evictionCandidate: EvictionPolicy.Candidate {
            EvictionPolicy.Candidate(
                key: record.key, bytes: usage, lastAccess: record.lastAccess, isPinned: isPinned,
                isInUse: !users.isEmpty)
        }

        /// A new entry with nothing cached and nothing known of the representation yet.
        static func empty(key: String, url: String, now: Double) -> Entry {
            Entry(
                record: CacheRecord(
                    key: key, hash: CacheFileNaming.hash(ofKey: key), url: url, fileName: nil, metadata: nil,
                    spans: ByteRangeSet(), lastAccess: now, created: now, pins: []),
                written: ByteRangeSet())
        }
    }

    private struct State {
        let index: CacheIndex
        var entries: [String: Entry]
        /// Bytes of unpinned entries, written or reserved: what the cap bounds.
        var unpinnedUsage: Int64 = 0
        /// Bytes of pinned entries.
        var pinnedUsage: Int64 = 0
        var subscribers: [Int: AsyncStream<MediaCacheEvent>.Continuation] = [:]
        var nextSubscriber = 0
        /// Data files renamed aside under the lock, to be unlinked once it is released: freeing a
        /// large file's blocks can take a long time on a busy disk, and every reader waits on the lock.
        var doomed: [String] = []
    }

    let directory: String
    let dataDirectory: String
    let byteLimit: Int64
    let claimBatchBytes: Int64
    let logger: Logger
    private let state: Mutex<State>
    /// Unlinks the data files set aside, in order, away from the caller: freeing a cached 1 GiB
    /// file's pages took 75–300 ms here, and the caller is often a request that needed the room.
    private let remover = DispatchQueue(label: "streamkit.media-cache.remove", qos: .utility)
    /// What start-up repaired: entries whose file held less than the index claimed.
    let repairs: [(key: String, droppedBytes: Int64)]

    /// Opens (creating) the index and data directory in `directory`, repairs entries whose files
    /// hold less than claimed, deletes files no entry names, and evicts down to the cap.
    init(directory: String, byteLimit: Int64, claimBatchBytes: Int64, logger: Logger) throws {
        self.directory = directory
        self.dataDirectory = directory + "/data"
        self.byteLimit = byteLimit
        self.claimBatchBytes = claimBatchBytes
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw MediaCacheError(.storageFailed, subject: dataDirectory, detail: "\(error)")
        }
        let index: CacheIndex
        let dataDirectory = dataDirectory
        var entries: [String: Entry] = [:]
        var repairs: [(String, Int64)] = []
        do {
            index = try CacheIndex(path: directory + "/index.sqlite")
            for var record in try index.loadAll() {
                let claimed = record.spans
                record.spans = Self.bytesPresent(
                    claimed: claimed, path: record.fileName.map { dataDirectory + "/" + $0 })
                if record.spans != claimed {
                    repairs.append((record.key, claimed.byteCount - record.spans.byteCount))
                    logger.warning(
                        "cache entry \(record.url): the file holds \(record.spans.byteCount) of \(claimed.byteCount) claimed bytes; repaired"
                    )
                    try index.save(record)
                }
                var entry = Entry(record: record, written: record.spans)
                entry.savedLastAccess = record.lastAccess
                entries[record.key] = entry
            }
        } catch let error as MediaCacheError {
            throw error
        } catch {
            throw MediaCacheError(.storageFailed, subject: directory + "/index.sqlite", detail: "\(error)")
        }
        self.repairs = repairs
        // Files no entry names: left by a crash between creating a file and recording it, or by hand.
        let named = Set(entries.values.compactMap(\.record.fileName))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        where !named.contains(name) {
            unlink(dataDirectory + "/" + name)
        }
        var initial = State(index: index, entries: entries)
        for entry in entries.values {
            if entry.isPinned { initial.pinnedUsage += entry.usage } else { initial.unpinnedUsage += entry.usage }
        }
        state = Mutex(initial)
        let events = locked { state in
            Self.evict(&state, toFit: 0, limit: byteLimit, dataDirectory: dataDirectory)
        }
        publish(events.events)
    }

    /// Runs `body` under the lock, then has the data files it set aside unlinked in the background.
    private func locked<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        let (result, doomed): (Result, [String]) = state.withLock { state in
            let result = body(&state)
            defer { state.doomed = [] }
            return (result, state.doomed)
        }
        if !doomed.isEmpty {
            remover.async {
                for path in doomed { unlink(path) }
            }
        }
        return result
    }

    /// Returns once every data file set aside so far is unlinked.
    func removalsFinished() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            remover.async { done.resume() }
        }
    }

    // MARK: Queries

    /// The entry for `key` as listed.
    func entry(forKey key: String) -> MediaCacheEntry? {
        locked { state in
            guard let entry = state.entries[key] else { return nil }
            var listed = entry.record.entry
            listed.spans = entry.written
            listed.cachedBytes = entry.written.byteCount
            listed.isInUse = !entry.users.isEmpty
            return listed
        }
    }

    /// Every entry, most recently used first.
    func entries() -> [MediaCacheEntry] {
        locked { state in
            state.entries.values.map { entry in
                var listed = entry.record.entry
                listed.spans = entry.written
                listed.cachedBytes = entry.written.byteCount
                listed.isInUse = !entry.users.isEmpty
                return listed
            }
        }
        .sorted { $0.lastAccess > $1.lastAccess || ($0.lastAccess == $1.lastAccess && $0.key < $1.key) }
    }

    /// The metadata and bytes on disk of `key`, and its data file's path.
    func snapshot(forKey key: String) -> (metadata: MediaCacheMetadata?, written: ByteRangeSet, path: String?)? {
        locked { state in
            guard let entry = state.entries[key] else { return nil }
            return (entry.record.metadata, entry.written, entry.record.fileName.map { dataDirectory + "/" + $0 })
        }
    }

    /// Bytes of unpinned entries (bounded by the cap) and of all entries.
    var usage: (unpinned: Int64, total: Int64) {
        locked { ($0.unpinnedUsage, $0.unpinnedUsage + $0.pinnedUsage) }
    }

    /// Whether a resource of `length` bytes may be kept: it fits under the cap, or is pinned.
    func canKeep(key: String, length: Int64) -> Bool {
        locked { state in length <= byteLimit || (state.entries[key]?.isPinned ?? false) }
    }

    /// Whether readers or fetches hold `key`.
    func isInUse(key: String) -> Bool { locked { !($0.entries[key]?.users.isEmpty ?? true) } }

    // MARK: Entries

    /// Records what the first response told about `key` (creating the entry), or the new
    /// representation after a change (dropping the old bytes). Returns the data file's path.
    @discardableResult
    func record(key: String, url: String, metadata: MediaCacheMetadata, now: Double) throws -> String {
        let result: Result<(String, [MediaCacheEvent]), MediaCacheError> = locked { state in
            var events: [MediaCacheEvent] = []
            var entry = state.entries[key] ?? .empty(key: key, url: url, now: now)
            let previous = entry.record.metadata
            let changed = previous.map { !Self.sameRepresentation($0, metadata) } ?? false
            if changed && !entry.written.isEmpty {
                Self.adjustUsage(&state, pinned: entry.isPinned, by: -entry.written.byteCount)
                entry.written = ByteRangeSet()
                entry.unclaimedBytes = 0
                if let fileName = entry.record.fileName { truncate(dataDirectory + "/" + fileName, 0) }
                events.append(.invalidated(key: key))
            }
            entry.record.url = url
            entry.record.metadata = metadata
            entry.record.spans = entry.written
            entry.record.lastAccess = now
            if entry.record.fileName == nil {
                entry.record.fileName = CacheFileNaming.fileName(
                    hash: entry.record.hash, url: url, mimeType: metadata.mimeType)
            }
            do {
                try state.index.save(entry.record)
                entry.savedLastAccess = entry.record.lastAccess
            } catch {
                return .failure(MediaCacheError(.storageFailed, subject: url, detail: "\(error)"))
            }
            state.entries[key] = entry
            return .success((dataDirectory + "/" + entry.record.fileName!, events))
        }
        let (path, events) = try result.get()
        publish(events)
        return path
    }

    /// Drops every byte of `key` (the representation changed) and records `metadata`.
    func invalidate(key: String, url: String, metadata: MediaCacheMetadata, now: Double) throws {
        let events: [MediaCacheEvent] = locked { state in
            guard var entry = state.entries[key] else { return [] }
            Self.adjustUsage(&state, pinned: entry.isPinned, by: -entry.written.byteCount)
            entry.written = ByteRangeSet()
            entry.unclaimedBytes = 0
            entry.record.spans = ByteRangeSet()
            entry.record.metadata = metadata
            entry.record.url = url
            entry.record.lastAccess = now
            // Removed rather than truncated: a write of the old bytes still under way (the HTTP
            // client's I/O thread writes fetched bodies itself) lands in the old file, never the new.
            if let fileName = entry.record.fileName { Self.setAside(&state, fileName, in: dataDirectory) }
            try? state.index.save(entry.record)
            state.entries[key] = entry
            return [.invalidated(key: key)]
        }
        publish(events)
    }

    /// `user` (a coordinator) starts using `key`, which must exist: it cannot be evicted until released.
    func acquire(key: String, user: ObjectIdentifier, now: Double) {
        locked { state in
            state.entries[key]?.users.insert(user)
            state.entries[key]?.record.lastAccess = now
        }
    }

    /// `user` starts reading the bytes `range` of `key` straight from its data file, when every
    /// one of them is on disk: the entry cannot be evicted until `user` releases it.
    ///
    /// - Returns: The data file's path, or `nil` when some byte of `range` is not cached.
    func acquireCached(key: String, range: ByteRange, user: ObjectIdentifier, now: Double) -> String? {
        locked { state in
            guard var entry = state.entries[key], let fileName = entry.record.fileName, entry.written.contains(range)
            else { return nil }
            entry.users.insert(user)
            entry.record.lastAccess = now
            state.entries[key] = entry
            return dataDirectory + "/" + fileName
        }
    }

    /// `user` stops using `key`; what was written is claimed. (A user of an entry removed and
    /// made again in the meantime releases nothing of the new one.)
    func release(key: String, user: ObjectIdentifier, now: Double) {
        let events: [MediaCacheEvent] = locked { state in
            guard var entry = state.entries[key], entry.users.contains(user) else { return [] }
            entry.users.remove(user)
            entry.record.lastAccess = now
            state.entries[key] = entry
            Self.claim(&state, key: key, logger: logger)
            guard entry.users.isEmpty, !entry.isPinned else { return [] }
            // Bytes written while the entry was in use may have left the cap exceeded.
            return Self.evict(&state, toFit: 0, limit: byteLimit, dataDirectory: dataDirectory).events
        }
        publish(events)
    }

    // MARK: Writing

    /// Reserves room for `count` bytes of `key`, evicting least recently used entries that are
    /// neither pinned nor in use. False when that cannot make room: the bytes must not be kept.
    func reserve(key: String, count: Int64) -> Bool {
        let (granted, events): (Bool, [MediaCacheEvent]) = locked { state in
            guard let entry = state.entries[key] else { return (false, []) }
            if entry.isPinned {
                state.entries[key]?.reserved += count
                state.pinnedUsage += count
                return (true, [])
            }
            let (fits, events) = Self.evict(&state, toFit: count, limit: byteLimit, dataDirectory: dataDirectory)
            guard fits else { return (false, events) }
            state.entries[key]?.reserved += count
            state.unpinnedUsage += count
            return (true, events)
        }
        publish(events)
        return granted
    }

    /// Returns a reservation whose bytes were not written.
    func cancelReservation(key: String, count: Int64) {
        locked { state in
            guard let entry = state.entries[key] else { return }
            state.entries[key]?.reserved -= count
            Self.adjustUsage(&state, pinned: entry.isPinned, by: -count)
        }
    }

    /// `range` of `key` was written (with `reservedCount` bytes reserved for it): it is on disk
    /// and will be claimed with the next batch.
    func didWrite(key: String, range: ByteRange, reservedCount: Int64, now: ContinuousClock.Instant) {
        let events: [MediaCacheEvent] = locked { state in
            guard var entry = state.entries[key] else { return [] }
            let before = entry.written.byteCount
            entry.written.insert(range)
            let added = entry.written.byteCount - before
            entry.reserved -= reservedCount
            entry.unclaimedBytes += added
            state.entries[key] = entry
            Self.adjustUsage(&state, pinned: entry.isPinned, by: added - reservedCount)
            if entry.unclaimedBytes >= claimBatchBytes || now - entry.lastClaim >= .milliseconds(500) {
                Self.claim(&state, key: key, logger: logger, now: now)
            }
            return [
                .stored(
                    key: key, range: range, unpinnedBytes: state.unpinnedUsage,
                    totalBytes: state.unpinnedUsage + state.pinnedUsage)
            ]
        }
        publish(events)
    }

    /// Claims in the index whatever of `key` is written and not yet claimed.
    func claim(key: String) {
        locked { Self.claim(&$0, key: key, logger: logger) }
    }

    /// Claims everything written, for every entry.
    func claimAll() {
        locked { state in
            for key in state.entries.keys { Self.claim(&state, key: key, logger: logger) }
        }
    }

    /// Replaces `key`'s bytes with `bytes` (a playlist fetched whole). False when the entry is in
    /// use or there is no room.
    func storeWhole(key: String, url: String, metadata: MediaCacheMetadata, bytes: [UInt8], now: Double) -> Bool {
        guard (try? record(key: key, url: url, metadata: metadata, now: now)) != nil else { return false }
        let (stored, events): (Bool, [MediaCacheEvent]) = locked { state in
            guard var entry = state.entries[key], entry.users.isEmpty, let fileName = entry.record.fileName else {
                return (false, [])
            }
            let count = Int64(bytes.count)
            let previous = entry.written.byteCount
            Self.adjustUsage(&state, pinned: entry.isPinned, by: -previous)
            entry.written = ByteRangeSet()
            state.entries[key] = entry
            var events: [MediaCacheEvent] = []
            if !entry.isPinned {
                let (fits, evicted) = Self.evict(&state, toFit: count, limit: byteLimit, dataDirectory: dataDirectory)
                events += evicted
                guard fits else {
                    truncate(dataDirectory + "/" + fileName, 0)
                    entry.record.spans = ByteRangeSet()
                    try? state.index.save(entry.record)
                    state.entries[key] = entry
                    return (false, events)
                }
            }
            let path = dataDirectory + "/" + fileName
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { return (false, events) }
            defer { close(descriptor) }
            guard (try? DataFile.write(bytes[...], to: descriptor, at: 0)) != nil else {
                ftruncate(descriptor, 0)
                return (false, events)
            }
            entry.written = bytes.isEmpty ? ByteRangeSet() : ByteRangeSet([ByteRange(0, count)])
            entry.record.spans = entry.written
            entry.record.lastAccess = now
            entry.unclaimedBytes = 0
            try? state.index.save(entry.record)
            state.entries[key] = entry
            Self.adjustUsage(&state, pinned: entry.isPinned, by: count)
            if count > 0 {
                events.append(
                    .stored(
                        key: key, range: ByteRange(0, count), unpinnedBytes: state.unpinnedUsage,
                        totalBytes: state.unpinnedUsage + state.pinnedUsage))
            }
            return (true, events)
        }
        publish(events)
        return stored
    }

    // MARK: Removal and pins

    /// Deletes `key`'s entry and file (its coordinator, if any, must have been retired). False
    /// when there is no such entry.
    func remove(key: String) -> Bool {
        let events: [MediaCacheEvent]? = locked { state in
            guard state.entries[key] != nil else { return nil }
            Self.delete(&state, key: key, dataDirectory: dataDirectory)
            return [.removed(key: key)]
        }
        publish(events ?? [])
        return events != nil
    }

    /// Deletes every entry (their coordinators must have been retired); returns how many.
    @discardableResult
    func removeAll() -> Int {
        let events: [MediaCacheEvent] = locked { state in
            var events: [MediaCacheEvent] = []
            for key in state.entries.keys.sorted() {
                Self.delete(&state, key: key, dataDirectory: dataDirectory)
                events.append(.removed(key: key))
            }
            return events
        }
        publish(events)
        return events.count
    }

    /// Pins `key` for `owner`, creating an empty entry when nothing of it is cached yet.
    func pin(key: String, url: String, owner: String, now: Double) throws {
        try state.withLock { state throws(MediaCacheError) in
            var entry = state.entries[key] ?? .empty(key: key, url: url, now: now)
            let wasPinned = entry.isPinned
            entry.record.pins.insert(owner)
            do {
                try state.index.transaction {
                    try state.index.save(entry.record)
                    try state.index.addPin(key: key, owner: owner)
                }
            } catch {
                throw MediaCacheError(.storageFailed, subject: url, detail: "\(error)")
            }
            state.entries[key] = entry
            if !wasPinned {
                state.unpinnedUsage -= entry.usage
                state.pinnedUsage += entry.usage
            }
        }
    }

    /// Removes `owner`'s pin of `key`; once no pin is left the entry may be evicted again (and
    /// is, at once, if the cap is exceeded). Returns whether there was such a pin.
    @discardableResult
    func unpin(key: String, owner: String) -> Bool {
        let (found, events): (Bool, [MediaCacheEvent]) = locked { state in
            guard var entry = state.entries[key], entry.record.pins.contains(owner) else { return (false, []) }
            entry.record.pins.remove(owner)
            try? state.index.removePin(key: key, owner: owner)
            state.entries[key] = entry
            guard !entry.isPinned else { return (true, []) }
            state.pinnedUsage -= entry.usage
            state.unpinnedUsage += entry.usage
            return (true, Self.evict(&state, toFit: 0, limit: byteLimit, dataDirectory: dataDirectory).events)
        }
        publish(events)
        return found
    }

    /// Removes every pin `owner` holds; returns the keys it pinned.
    @discardableResult
    func unpinAll(owner: String) -> [String] {
        let keys = locked { state in
            state.entries.filter { $0.value.record.pins.contains(owner) }.map(\.key).sorted()
        }
        for key in keys { unpin(key: key, owner: owner) }
        return keys
    }

    // MARK: Events

    /// A new stream of every event from now on.
    func events() -> AsyncStream<MediaCacheEvent> {
        let (stream, continuation) = AsyncStream<MediaCacheEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = locked { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.locked { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Reports a resource streamed without being kept.
    func publishPassThrough(url: String, length: Int64?) {
        publish([.passedThrough(url: url, length: length)])
    }

    /// Ends every event stream.
    func finishEvents() {
        let subscribers = locked { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    private func publish(_ events: [MediaCacheEvent]) {
        guard !events.isEmpty else { return }
        let subscribers = locked { Array($0.subscribers.values) }
        for event in events {
            if case .evicted(let key, let bytes) = event { logger.debug("evicted \(key) (\(bytes) bytes)") }
            for subscriber in subscribers { subscriber.yield(event) }
        }
    }

    // MARK: Private

    private static func adjustUsage(_ state: inout State, pinned: Bool, by delta: Int64) {
        if pinned { state.pinnedUsage += delta } else { state.unpinnedUsage += delta }
    }

    private static func claim(
        _ state: inout State, key: String, logger: Logger, now: ContinuousClock.Instant = .now
    ) {
        guard var entry = state.entries[key] else { return }
        entry.lastClaim = now
        // A read served from the cache claims nothing, but its access time must outlive the
        // process (found in an audit: after a restart, eviction order was the order of first
        // fetches). One UPDATE when its reader ends; entries not read since they were loaded or
        // saved write nothing.
        guard
            entry.written != entry.record.spans || entry.unclaimedBytes > 0
                || entry.record.lastAccess != entry.savedLastAccess
        else {
            state.entries[key] = entry
            return
        }
        do {
            try state.index.saveSpans(key: key, spans: entry.written, lastAccess: entry.record.lastAccess)
            entry.record.spans = entry.written
            entry.unclaimedBytes = 0
            entry.savedLastAccess = entry.record.lastAccess
        } catch {
            logger.warning("cannot update the cache index for \(entry.record.url): \(error)")
        }
        state.entries[key] = entry
    }

    /// Evicts the entries ``EvictionPolicy`` picks so that `count` more bytes fit under `limit`.
    /// Returns whether they fit, and the evictions.
    private static func evict(
        _ state: inout State, toFit count: Int64, limit: Int64, dataDirectory: String
    ) -> (fits: Bool, events: [MediaCacheEvent]) {
        let decision = EvictionPolicy(byteLimit: limit).victims(
            toFit: count, usage: state.unpinnedUsage, among: state.entries.values.lazy.map(\.evictionCandidate))
        var events: [MediaCacheEvent] = []
        for key in decision.victims {
            let bytes = state.entries[key]?.written.byteCount ?? 0
            delete(&state, key: key, dataDirectory: dataDirectory)
            events.append(.evicted(key: key, bytes: bytes))
        }
        return (decision.fits, events)
    }

    private static func delete(_ state: inout State, key: String, dataDirectory: String) {
        guard let entry = state.entries.removeValue(forKey: key) else { return }
        adjustUsage(&state, pinned: entry.isPinned, by: -entry.usage)
        if let fileName = entry.record.fileName { setAside(&state, fileName, in: dataDirectory) }
        try? state.index.delete(key: key)
    }

    /// Renames a data file aside now (a new file of the same name may be made at once) and has it
    /// unlinked after the lock, in the background (see `locked`); one left by a crash is swept at
    /// the next start-up.
    private static func setAside(_ state: inout State, _ fileName: String, in dataDirectory: String) {
        let path = dataDirectory + "/" + fileName
        let aside = dataDirectory + "/.deleted-" + UUID().uuidString
        if rename(path, aside) == 0 { state.doomed.append(aside) } else { unlink(path) }
    }

    /// Whether two metadata describe the same representation: same length, and the same
    /// validators where both have one.
    static func sameRepresentation(_ old: MediaCacheMetadata, _ new: MediaCacheMetadata) -> Bool {
        guard old.length == new.length else { return false }
        if let oldTag = old.entityTag, let newTag = new.entityTag { return oldTag.strongMatches(newTag) }
        if let oldDate = old.lastModified, let newDate = new.lastModified { return oldDate == newDate }
        return true
    }

    /// The part of `claimed` the file at `path` really holds: not past its end, not in a hole.
    static func bytesPresent(claimed: ByteRangeSet, path: String?) -> ByteRangeSet {
        guard !claimed.isEmpty else { return claimed }
        guard let path else { return ByteRangeSet() }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return ByteRangeSet() }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return ByteRangeSet() }
        let size = Int64(status.st_size)
        var present = claimed
        present.remove(ByteRange(min(size, Int64.max - 1), Int64.max))
        // Holes: claimed bytes the file system has no data for (never written).
        for span in present.ranges {
            var offset = span.lowerBound
            while offset < span.upperBound {
                let hole = Int64(lseek(descriptor, off_t(offset), seekHole))
                guard hole >= 0, hole < span.upperBound else { break }
                let data = Int64(lseek(descriptor, off_t(hole), seekData))
                let holeEnd = data < 0 ? span.upperBound : min(data, span.upperBound)
                present.remove(ByteRange(hole, holeEnd))
                offset = holeEnd
            }
        }
        return present
    }
}

#if canImport(Darwin)
private let seekHole: Int32 = 3
private let seekData: Int32 = 4
#else
/// `SEEK_HOLE` and `SEEK_DATA` (Linux values; Glibc's module leaves them out without `_GNU_SOURCE`).
private let seekData: Int32 = 3
private let seekHole: Int32 = 4
#endif

/// Positional reads and writes of data files.
enum DataFile {
    /// Writes all of `bytes` at `offset`.
    static func write(_ bytes: ArraySlice<UInt8>, to descriptor: Int32, at offset: Int64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("pwrite", subject: "cache file at offset \(offset + Int64(done))")
            }
            done += result
        }
    }

    /// Frees the blocks of `range` (a hole; the file keeps its size). Best effort: a file system
    /// without holes keeps the bytes, which no span claims.
    static func punchHole(_ range: ByteRange, in descriptor: Int32) {
        // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
        _ = fallocate?(descriptor, 0x02 | 0x01, off_t(range.lowerBound), off_t(range.count))
    }

    /// Linux's `fallocate`, which Glibc's module leaves out without `_GNU_SOURCE`: looked up at
    /// run time (absent elsewhere).
    private static let fallocate: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32).self)
    }()

    /// Reads exactly `range` (fewer bytes only if the file ends first).
    static func read(_ range: ByteRange, from descriptor: Int32) throws(SystemError) -> [UInt8] {
        let count = Int(range.count)
        var failure: SystemError?
        // Uninitialized: every byte returned is one pread wrote.
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let result = pread(
                    descriptor, buffer.baseAddress! + done, count - done, off_t(range.lowerBound) + off_t(done))
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = SystemError.current(
                        "pread", subject: "cache file at offset \(range.lowerBound + Int64(done))")
                    break
                }
                if result == 0 { break }
                done += result
            }
            initialized = done
        }
        if let failure { throw failure }
        return bytes
    }
}
