import Foundation
import StreamKitCore
import StreamKitHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Removal: entries deleted on request or evicted, their data files set aside and unlinked later.
extension CacheStore {
    /// Deletes `key`'s entry and file (its coordinator, if any, must have been retired). False
    /// when there is no such entry.
    func remove(key: String) -> Bool {
        let events: [MediaCacheEvent]? = locked { state in
            guard state.entries[key] != nil || (try? state.index.contains(key: key)) == true else { return nil }
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
            for key in Set(state.entries.keys).union((try? state.index.allKeys()) ?? []).sorted() {
                Self.delete(&state, key: key, dataDirectory: dataDirectory)
                events.append(.removed(key: key))
            }
            return events
        }
        publish(events)
        return events.count
    }

    /// Evicts the entries ``EvictionPolicy`` picks so that `count` more bytes fit under `limit`.
    /// Returns whether they fit, and the evictions.
    static func evict(
        _ state: inout State, toFit count: Int64, limit: Int64, dataDirectory: String
    ) -> (fits: Bool, events: [MediaCacheEvent]) {
        guard state.unpinnedUsage + count > limit else { return (true, []) }
        let decision = EvictionPolicy(byteLimit: limit).victims(
            toFit: count, usage: state.unpinnedUsage, loaded: state.entries.values.map(\.evictionCandidate),
            stored: StoredEvictionOrder(index: state.index))
        var events: [MediaCacheEvent] = []
        // One transaction for the victims' rows: a commit each was most of an eviction's cost.
        try? state.index.execute("BEGIN IMMEDIATE")
        for key in decision.victims {
            let bytes = delete(&state, key: key, dataDirectory: dataDirectory)
            events.append(.evicted(key: key, bytes: bytes))
        }
        try? state.index.execute("COMMIT")
        return (decision.fits, events)
    }

    /// Deletes `key`'s entry, loaded or not, and sets its file aside; returns the bytes it held
    /// (for an entry not loaded, what the index claimed).
    @discardableResult
    static func delete(_ state: inout State, key: String, dataDirectory: String) -> Int64 {
        let held: (bytes: Int64, usage: Int64, pinned: Bool, fileName: String?)
        if let entry = state.entries.removeValue(forKey: key) {
            held = (entry.written.byteCount, entry.usage, entry.isPinned, entry.record.fileName)
        } else if let stored = try? state.index.holding(key: key) {
            held = (stored.bytes, stored.bytes, stored.isPinned, stored.fileName)
        } else {
            return 0
        }
        adjustUsage(&state, pinned: held.pinned, by: -held.usage)
        if let fileName = held.fileName { setAside(&state, fileName, in: dataDirectory) }
        try? state.index.delete(key: key)
        return held.bytes
    }

    /// Renames a data file aside now (a new file of the same name may be made at once) and has it
    /// unlinked after the lock, in the background (see `locked`); one left by a crash is swept at
    /// the next start-up.
    static func setAside(_ state: inout State, _ fileName: String, in dataDirectory: String) {
        let path = dataDirectory + "/" + fileName
        state.asideCount += 1
        let aside = dataDirectory + "/.deleted-\(state.asidePrefix)-\(state.asideCount)"
        if rename(path, aside) == 0 { state.doomed.append(aside) } else { unlink(path) }
    }
}
