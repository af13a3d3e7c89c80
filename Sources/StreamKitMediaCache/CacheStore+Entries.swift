import Foundation
import StreamKitCore
import StreamKitHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Entries: what the responses told of each resource, and who uses it.
extension CacheStore {
    /// Records what the first response told about `key` (creating the entry), or the new
    /// representation after a change (dropping the old bytes). Returns the data file's path.
    @discardableResult
    func record(key: String, url: String, metadata: MediaCacheMetadata, now: Double) throws -> String {
        let result: Result<(String, [MediaCacheEvent]), MediaCacheError> = locked { state in
            var events: [MediaCacheEvent] = []
            var entry = load(&state, key: key) ?? .empty(key: key, url: url, now: now)
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
            guard var entry = load(&state, key: key) else { return [] }
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
            guard load(&state, key: key) != nil else { return }
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
            guard var entry = load(&state, key: key), let fileName = entry.record.fileName,
                entry.written.contains(range)
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
            defer { Self.unloadIfSettled(&state, key: key) }
            guard entry.users.isEmpty, !entry.isPinned else { return [] }
            // Bytes written while the entry was in use may have left the cap exceeded.
            return Self.evict(&state, toFit: 0, limit: byteLimit, dataDirectory: dataDirectory).events
        }
        publish(events)
    }

    /// Whether two metadata describe the same representation: same length, and the same
    /// validators where both have one.
    static func sameRepresentation(_ old: MediaCacheMetadata, _ new: MediaCacheMetadata) -> Bool {
        guard old.length == new.length else { return false }
        if let oldTag = old.entityTag, let newTag = new.entityTag { return oldTag.strongMatches(newTag) }
        if let oldDate = old.lastModified, let newDate = new.lastModified { return oldDate == newDate }
        return true
    }
}
