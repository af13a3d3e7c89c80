import Foundation
import StreamKitCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Loading: entries come into memory when first asked for and leave it once settled, so that the
// store's memory and its start-up follow the entries in use, not the size of the cache.
extension CacheStore {
    /// The entry for `key`, loaded from the index if it is not in memory yet. A loaded entry's
    /// data file is checked against what the index claims (``bytesPresent(claimed:path:)``): what
    /// a damaged or truncated file no longer holds is dropped from the claim, saved, and listed in
    /// ``repairs``. Nil when the index has no such entry (or cannot be read).
    func load(_ state: inout State, key: String) -> Entry? {
        if let entry = state.entries[key] { return entry }
        let stored: CacheRecord?
        do {
            stored = try state.index.record(forKey: key)
        } catch {
            logger.warning("cannot read the cache index for \(key): \(error)")
            return nil
        }
        guard var record = stored else { return nil }
        let claimed = record.spans
        record.spans = Self.bytesPresent(claimed: claimed, path: record.fileName.map { dataDirectory + "/" + $0 })
        if record.spans != claimed {
            let dropped = claimed.byteCount - record.spans.byteCount
            state.repairs.append((key, dropped))
            Self.adjustUsage(&state, pinned: !record.pins.isEmpty, by: -dropped)
            logger.warning(
                "cache entry \(record.url): the file holds \(record.spans.byteCount) of \(claimed.byteCount) claimed bytes; repaired"
            )
            try? state.index.save(record)
        }
        var entry = Entry(record: record, written: record.spans)
        entry.savedLastAccess = record.lastAccess
        state.entries[key] = entry
        return entry
    }

    /// Lets `key` leave memory when nothing of it differs from the index: no user, nothing
    /// reserved or unclaimed, its last access saved.
    static func unloadIfSettled(_ state: inout State, key: String) {
        guard let entry = state.entries[key], entry.users.isEmpty, entry.reserved == 0, entry.unclaimedBytes == 0,
            entry.written == entry.record.spans, entry.record.lastAccess == entry.savedLastAccess
        else { return }
        state.entries[key] = nil
    }

    /// The index's unpinned entries that hold bytes, in eviction order, a page at a time (the
    /// first small: most evictions take one or two).
    struct StoredEvictionOrder: Sequence, IteratorProtocol {
        let index: CacheIndex
        private var page: [EvictionPolicy.Candidate] = []
        private var position = 0
        private var pageSize = 8
        private var isExhausted = false

        init(index: CacheIndex) { self.index = index }

        mutating func next() -> EvictionPolicy.Candidate? {
            if position == page.count {
                guard !isExhausted else { return nil }
                let after = page.last.map { (lastAccess: $0.lastAccess, key: $0.key) }
                guard let rows = try? index.evictionCandidates(after: after, limit: pageSize), !rows.isEmpty else {
                    isExhausted = true
                    return nil
                }
                isExhausted = rows.count < pageSize
                page = rows
                position = 0
                pageSize = Swift.min(pageSize * 4, 4096)
            }
            defer { position += 1 }
            return page[position]
        }
    }

    /// Deletes, in the background after `delay`, the data files no entry names: left by a crash
    /// between setting a file aside and unlinking it, or put there by hand. Each name is checked
    /// against the index under the lock (an entry recorded since the listing names its file
    /// before the file exists), in batches so that readers wait little; it stops when the store
    /// closes.
    func sweepStrayFiles(after delay: Duration) {
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) { [self] in
            guard !isClosing.load(ordering: .relaxed) else { return }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
            var start = names.startIndex
            while start < names.endIndex, !isClosing.load(ordering: .relaxed) {
                let batch = names[start..<Swift.min(start + 256, names.endIndex)]
                start = batch.endIndex
                locked { state in
                    for name in batch where !((try? state.index.names(fileName: name)) ?? true) {
                        unlink(dataDirectory + "/" + name)
                    }
                }
            }
        }
    }
}
