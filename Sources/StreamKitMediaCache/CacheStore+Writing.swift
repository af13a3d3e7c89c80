import Foundation
import StreamKitCore
import StreamKitHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Writing: room reserved under the cap, bytes written, and claimed in the index in batches.
extension CacheStore {
    /// Reserves room for `count` bytes of `key`, evicting least recently used entries that are
    /// neither pinned nor in use. False when that cannot make room: the bytes must not be kept.
    func reserve(key: String, count: Int64) -> Bool {
        let (granted, events): (Bool, [MediaCacheEvent]) = locked { state in
            guard let entry = load(&state, key: key) else { return (false, []) }
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
            // The keys copied first: iterating the dictionary's own keys while claiming writes to it
            // copied every entry (a tenth of closing a cache of a hundred thousand).
            for key in Array(state.entries.keys) { Self.claim(&state, key: key, logger: logger) }
        }
    }

    /// Replaces `key`'s bytes with `bytes` (a playlist fetched whole). False when the entry is in
    /// use or there is no room.
    func storeWhole(key: String, url: String, metadata: MediaCacheMetadata, bytes: [UInt8], now: Double) -> Bool {
        guard (try? record(key: key, url: url, metadata: metadata, now: now)) != nil else { return false }
        let (stored, events): (Bool, [MediaCacheEvent]) = locked { state in
            guard var entry = load(&state, key: key), entry.users.isEmpty, let fileName = entry.record.fileName else {
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
            let descriptor = PrivateFiles.open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
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

    static func adjustUsage(_ state: inout State, pinned: Bool, by delta: Int64) {
        if pinned { state.pinnedUsage += delta } else { state.unpinnedUsage += delta }
    }

    static func claim(
        _ state: inout State, key: String, logger: Logger, now: ContinuousClock.Instant = .now
    ) {
        guard var entry = state.entries[key] else { return }
        entry.lastClaim = now
        // A read served from the cache claims nothing, but its access time must outlive the
        // process, or eviction after a restart follows the order of first fetches. One UPDATE
        // when its reader ends; entries not read since they were loaded or saved write nothing.
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
}
