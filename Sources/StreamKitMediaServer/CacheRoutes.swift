import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaCache

/// The caching proxy's cache under `/api/` (docs/API.md): what it holds, pinning, removing one
/// entry or all. Other sites' pages get none of it; changes need the access token.
enum CacheRoutes {
    /// Entries `GET /api/cache` lists when `limit=` does not say (most recently used first).
    static let listLimit = 100

    static func routes(
        cache: MediaCache, sites: CrossSiteCheck, limitChanged: (@Sendable (Int64) -> Void)? = nil
    ) -> HTTPRouter {
        var router = HTTPRouter()
        // `{"entries": [...], "entryCount", "cachedBytes", "pinnedBytes", "limit", "listed"}`.
        router.get("/api/cache") { request in
            try sites.check(request, serving: "/api/")
            let limit = try QueueRoutes.integer(request, "limit", default: listLimit, in: 1...100_000)
            return .json(try listing(cache, limit: limit))
        }
        // `{"url": URL, "pinned": true|false}`: pins the entry (caching nothing yet: it fills as it
        // is played) or removes the user's pin.
        router.post("/api/cache/pin") { request in
            try sites.check(request, serving: "/api/")
            struct Pin: Decodable {
                let url: String
                let pinned: Bool?
            }
            let pin: Pin = try QueueRoutes.decode(request)
            if pin.pinned ?? true {
                do {
                    try cache.pin(pin.url)
                } catch let error as MediaCacheError where error.kind == .unsupportedURL {
                    throw HTTPResponseError(.badRequest, message: "\(error)")
                } catch {
                    throw HTTPResponseError(.internalServerError, message: "\(error)")
                }
            } else if !cache.unpin(pin.url) {
                throw HTTPResponseError(.notFound, message: "\(pin.url) is not pinned")
            }
            // An unpinned entry with nothing cached may be gone already: then only the URL.
            guard let entry = cache.entry(for: pin.url) else {
                return .json(
                    Array("{\"pinned\":false,\"url\":".utf8) + (try APIJSON.encode(pin.url)) + [UInt8(ascii: "}")])
            }
            return .json(try APIJSON.encode(EntryBody(entry)))
        }
        // `{"limit": BYTES}` changes the cap (evicting down to it at once); answers as GET.
        router.patch("/api/cache") { request in
            try sites.check(request, serving: "/api/")
            struct Change: Decodable { let limit: Int64? }
            let change: Change = try QueueRoutes.decode(request)
            guard let limit = change.limit, limit >= 1 << 20 else {
                throw HTTPResponseError(.badRequest, message: "send {\"limit\": BYTES}, at least 1 MiB (1048576)")
            }
            try cache.setByteLimit(limit)
            limitChanged?(limit)
            return .json(try listing(cache, limit: listLimit))
        }
        // `?url=URL` removes one entry and its file; `?all=true` clears the cache.
        router.delete("/api/cache") { request in
            try sites.check(request, serving: "/api/")
            if let url = request.queryValue("url") {
                guard await cache.remove(url) else {
                    throw HTTPResponseError(.notFound, message: "\(url) is not cached")
                }
                return .json(Array(#"{"removed":1}"#.utf8))
            }
            guard try QueueRoutes.boolean(request, "all") else {
                throw HTTPResponseError(.badRequest, message: "name the entry with ?url=, or clear all with ?all=true")
            }
            let count = await cache.removeAll()
            return .json(Array("{\"removed\":\(count)}".utf8))
        }
        return router
    }

    /// An entry as `/api/cache` shows it.
    struct EntryBody: Encodable {
        let url: String
        let key: String
        let length: Int64?
        let cachedBytes: Int64
        let cachedPercent: Double
        let complete: Bool
        let pinned: Bool
        let pinnedBy: [String]
        let lastAccess: Double
        let mimeType: String?

        init(_ entry: MediaCacheEntry) {
            url = entry.url
            key = entry.key
            length = entry.length
            cachedBytes = entry.cachedBytes
            cachedPercent = entry.cachedPercent
            complete = entry.isComplete
            pinned = entry.isPinned
            pinnedBy = entry.pinnedBy
            lastAccess = entry.lastAccess
            mimeType = entry.mimeType
        }
    }

    private static func listing(_ cache: MediaCache, limit: Int) throws -> [UInt8] {
        // The index as saved; the cache's own figures for what it has written since.
        let listing = try MediaCache.listing(inDirectory: cache.configuration.directory, limit: limit)
        let usage = cache.usage
        struct Body: Encodable {
            let entries: [EntryBody]
            let entryCount: Int
            let cachedBytes: Int64
            let pinnedBytes: Int64
            let limit: Int64
            let listed: Int
        }
        return try APIJSON.encode(
            Body(
                entries: listing.entries.map { cache.entry(for: $0.url).map(EntryBody.init) ?? EntryBody($0) },
                entryCount: listing.entryCount, cachedBytes: usage.total, pinnedBytes: usage.total - usage.unpinned,
                limit: cache.byteLimit, listed: listing.entries.count))
    }
}
