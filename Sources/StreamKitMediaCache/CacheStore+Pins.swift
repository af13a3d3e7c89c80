import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

// Pins: entries kept whatever the cap, for as long as an owner holds them.
extension CacheStore {
    /// Pins `key` for `owner`, creating an empty entry when nothing of it is cached yet.
    func pin(key: String, url: String, owner: String, now: Double) throws {
        try state.withLock { state throws(MediaCacheError) in
            var entry = load(&state, key: key) ?? .empty(key: key, url: url, now: now)
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
            guard var entry = load(&state, key: key), entry.record.pins.contains(owner) else { return (false, []) }
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
            let stored = (try? state.index.keys(pinnedBy: owner)) ?? []
            let loaded = state.entries.filter { $0.value.record.pins.contains(owner) }.map(\.key)
            return Set(stored + loaded).sorted()
        }
        for key in keys { unpin(key: key, owner: owner) }
        return keys
    }
}
