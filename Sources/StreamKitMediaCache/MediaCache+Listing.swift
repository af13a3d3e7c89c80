import Foundation

extension MediaCache {
    /// The entries of the cache in `directory` as its index records them, without opening the
    /// cache (so while another process has it open): bytes written but not yet claimed by that
    /// process are not counted. Empty when there is no cache there.
    ///
    /// - Throws: ``MediaCacheError`` of kind `storageFailed` when the index cannot be read.
    public static func entries(inDirectory directory: String) throws -> [MediaCacheEntry] {
        try listing(inDirectory: directory, limit: nil).entries
    }

    /// The `limit` most recently used entries of the cache in `directory` (all when `nil`), most
    /// recent first, with the number of entries and the bytes they claim, read as
    /// ``entries(inDirectory:)`` reads them. Reads only the entries listed and the index's totals.
    ///
    /// - Throws: ``MediaCacheError`` of kind `storageFailed` when the index cannot be read.
    public static func listing(inDirectory directory: String, limit: Int?) throws -> MediaCacheListing {
        let path = directory + "/index.sqlite"
        guard FileManager.default.fileExists(atPath: path) else {
            return MediaCacheListing(entries: [], entryCount: 0, cachedBytes: 0)
        }
        do {
            let index = try CacheIndex(path: path)
            let summary = try index.summary()
            return MediaCacheListing(
                entries: try index.recentRecords(limit: limit).map(\.entry), entryCount: summary.entries,
                cachedBytes: summary.bytes)
        } catch {
            throw MediaCacheError(.storageFailed, subject: path, detail: "\(error)")
        }
    }
}
