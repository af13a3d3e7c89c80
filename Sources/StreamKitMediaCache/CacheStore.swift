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
/// The store holds in memory only the entries in use or changed since they were last saved: the
/// others stay in the index, from which an entry is loaded when first asked for (its data file
/// checked then), so that opening a cache and each operation cost the same for ten entries and a
/// hundred thousand. Eviction's victims are picked by ``EvictionPolicy`` from the loaded entries
/// and the index's eviction order; the store deletes them. The operations are in extensions by
/// aspect: `+Loading`, `+Entries`, `+Writing`, `+Removal` (with eviction), `+Pins`, `+Events`,
/// `+Repair`.
///
/// The rule that makes a crash harmless: bytes are written to the data file first, and only then
/// claimed in the index (in batches: every ``MediaCacheConfiguration/claimBatchBytes``, every half
/// second of writing, and when a reader or fetch ends). A process killed in between leaves the
/// index claiming less than the file holds, never more; an entry whose damaged or truncated file
/// no longer holds what the index claims is repaired when it is loaded.
final class CacheStore: Sendable {
    /// One resource while the store knows it.
    struct Entry {
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

    struct State {
        let index: CacheIndex
        /// The entries loaded from the index (see `+Loading`); the others are as the index has them.
        var entries: [String: Entry] = [:]
        /// Bytes of unpinned entries, written or reserved: what the cap bounds.
        var unpinnedUsage: Int64 = 0
        /// Bytes of pinned entries.
        var pinnedUsage: Int64 = 0
        var subscribers: [Int: AsyncStream<MediaCacheEvent>.Continuation] = [:]
        var nextSubscriber = 0
        /// Data files renamed aside under the lock, to be unlinked once it is released: freeing a
        /// large file's blocks can take a long time on a busy disk, and every reader waits on the lock.
        var doomed: [String] = []
        /// Names files set aside: `.deleted-` with this process's prefix and a count (a random
        /// UUID for each file cost an eviction of 10,000 entries a tenth of its time).
        let asidePrefix = UUID().uuidString
        var asideCount = 0
        /// Entries whose data files held less than the index claimed when they were loaded.
        var repairs: [(key: String, droppedBytes: Int64)] = []
    }

    let directory: String
    let dataDirectory: String
    /// The cap on unpinned bytes; ``setByteLimit(_:)`` changes it while the cache runs.
    var byteLimit: Int64 { limit.load(ordering: .relaxed) }
    private let limit: Atomic<Int64>
    let claimBatchBytes: Int64
    let logger: Logger
    let state: Mutex<State>
    /// Unlinks the data files set aside, in order, away from the caller: freeing a large file's
    /// pages can take long, and the caller is often a request that needed the room.
    private let remover = DispatchQueue(label: "streamkit.media-cache.remove", qos: .utility)
    /// Set when the store closes: the sweep of stray files stops.
    let isClosing = Atomic(false)

    /// Opens (creating) the index and data directory in `directory`, reads the usage totals, and
    /// evicts down to the cap; `strayFileSweepDelay` after, deletes in the background the files
    /// no entry names (see `+Loading`).
    init(
        directory: String, byteLimit: Int64, claimBatchBytes: Int64, strayFileSweepDelay: Duration?,
        logger: Logger
    ) throws {
        self.directory = directory
        self.dataDirectory = directory + "/data"
        self.limit = Atomic(byteLimit)
        self.claimBatchBytes = claimBatchBytes
        self.logger = logger
        do {
            try PrivateFiles.createDirectory(dataDirectory)
            PrivateFiles.restrictDirectory(dataDirectory)
        } catch {
            throw MediaCacheError(.storageFailed, subject: dataDirectory, detail: "\(error)")
        }
        var initial: State
        do {
            initial = State(index: try CacheIndex(path: directory + "/index.sqlite"))
            let totals = try initial.index.usageTotals()
            initial.pinnedUsage = totals.pinned
            initial.unpinnedUsage = totals.all - totals.pinned
        } catch let error as MediaCacheError {
            throw error
        } catch {
            throw MediaCacheError(.storageFailed, subject: directory + "/index.sqlite", detail: "\(error)")
        }
        state = Mutex(initial)
        let events = locked { state in
            Self.evict(&state, toFit: 0, limit: byteLimit, dataDirectory: dataDirectory)
        }
        publish(events.events)
        if let strayFileSweepDelay { sweepStrayFiles(after: strayFileSweepDelay) }
    }

    /// Changes the cap and evicts down to it.
    func setByteLimit(_ bytes: Int64) {
        let events = locked { state in
            limit.store(bytes, ordering: .relaxed)
            return Self.evict(&state, toFit: 0, limit: bytes, dataDirectory: dataDirectory).events
        }
        publish(events)
    }

    /// Entries whose data files held less than the index claimed when they were loaded, and how
    /// many claimed bytes were dropped from each.
    var repairs: [(key: String, droppedBytes: Int64)] { locked { $0.repairs } }

    /// Runs `body` under the lock, then has the data files it set aside unlinked in the background.
    func locked<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
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

    /// The entry for `key` as listed (loading it).
    func entry(forKey key: String) -> MediaCacheEntry? {
        locked { state in load(&state, key: key).map(Self.listed) }
    }

    /// Every entry, most recently used first: the loaded ones as they are, the others as the index
    /// has them (their files not checked).
    func entries() -> [MediaCacheEntry] {
        let listed: [MediaCacheEntry] = locked { state in
            var listed = state.entries.values.map(Self.listed)
            for record in (try? state.index.loadAll()) ?? [] where state.entries[record.key] == nil {
                listed.append(record.entry)
            }
            return listed
        }
        return listed.sorted { $0.lastAccess > $1.lastAccess || ($0.lastAccess == $1.lastAccess && $0.key < $1.key) }
    }

    static func listed(_ entry: Entry) -> MediaCacheEntry {
        var listed = entry.record.entry
        listed.spans = entry.written
        listed.cachedBytes = entry.written.byteCount
        listed.isInUse = !entry.users.isEmpty
        return listed
    }

    /// The metadata and bytes on disk of `key`, and its data file's path.
    func snapshot(forKey key: String) -> (metadata: MediaCacheMetadata?, written: ByteRangeSet, path: String?)? {
        locked { state in
            guard let entry = load(&state, key: key) else { return nil }
            return (entry.record.metadata, entry.written, entry.record.fileName.map { dataDirectory + "/" + $0 })
        }
    }

    /// The keys of the entries fetched from `url`.
    func keys(forURL url: String) -> [String] {
        locked { state in
            let stored = (try? state.index.keys(forURL: url)) ?? []
            return Array(Set(stored + state.entries.values.filter { $0.record.url == url }.map(\.record.key)))
        }
    }

    /// Bytes of unpinned entries (bounded by the cap) and of all entries.
    var usage: (unpinned: Int64, total: Int64) {
        locked { ($0.unpinnedUsage, $0.unpinnedUsage + $0.pinnedUsage) }
    }

    /// Whether a resource of `length` bytes may be kept: it fits under the cap, or is pinned.
    func canKeep(key: String, length: Int64) -> Bool {
        locked { state in length <= byteLimit || (load(&state, key: key)?.isPinned ?? false) }
    }

    /// Whether readers or fetches hold `key`.
    func isInUse(key: String) -> Bool { locked { !($0.entries[key]?.users.isEmpty ?? true) } }
}
