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

    /// Evicts the entries ``EvictionPolicy`` picks so that `count` more bytes fit under `limit`.
    /// Returns whether they fit, and the evictions.
    static func evict(
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

    static func delete(_ state: inout State, key: String, dataDirectory: String) {
        guard let entry = state.entries.removeValue(forKey: key) else { return }
        adjustUsage(&state, pinned: entry.isPinned, by: -entry.usage)
        if let fileName = entry.record.fileName { setAside(&state, fileName, in: dataDirectory) }
        try? state.index.delete(key: key)
    }

    /// Renames a data file aside now (a new file of the same name may be made at once) and has it
    /// unlinked after the lock, in the background (see `locked`); one left by a crash is swept at
    /// the next start-up.
    static func setAside(_ state: inout State, _ fileName: String, in dataDirectory: String) {
        let path = dataDirectory + "/" + fileName
        let aside = dataDirectory + "/.deleted-" + UUID().uuidString
        if rename(path, aside) == 0 { state.doomed.append(aside) } else { unlink(path) }
    }
}
