import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer

/// The library as JSON, and removing an item: `GET /api/library` and `DELETE /api/library/ID`.
/// Other sites' pages get neither (``CrossSiteCheck``); the removal, a change of state, also
/// needs the access token (the sign-in cookie, from the server's own page) like every route
/// that is not a read.
enum LibraryRoutes {
    static func routes(library: MediaLibrary, sites: CrossSiteCheck) -> HTTPRouter {
        var router = HTTPRouter()
        // `{"items": [{"id", "title", "state", "size", "duration", "entry", "playPath",
        // "dashPlayPath" (a package from DASH)}...],
        // "size", "duration"}`: every item, sorted by title, and their totals.
        router.get("/api/library") { request in
            try sites.check(request, serving: "/api/")
            let items = try library.items()
            let json = JSONWriter.bytes { writer in
                writer.beginObject()
                writer.key("items")
                writer.beginArray()
                for item in items {
                    writer.beginObject()
                    writer.key("duration")
                    if let duration = item.duration { writer.double(duration) } else { writer.null() }
                    writer.field("entry", item.entry)
                    writer.field("id", item.id)
                    writer.field("playPath", item.playPath)
                    if let path = item.dashPlayPath { writer.field("dashPlayPath", path) }
                    writer.field("size", item.size)
                    writer.field("state", item.state)
                    writer.field("title", item.title)
                    writer.endObject()
                }
                writer.endArray()
                writer.field("duration", items.reduce(0) { $0 + ($1.duration ?? 0) })
                writer.field("size", items.reduce(Int64(0)) { $0 + $1.size })
                writer.endObject()
            }
            return .json(json)
        }
        router.delete("/api/library/:id") { request in
            try sites.check(request, serving: "/api/")
            let id = request.rawRouteParameter("id").flatMap { $0.removingPercentEncoding } ?? ""
            guard try library.remove(id) else { throw HTTPResponseError(.notFound, message: "no such item") }
            return .json(Array(#"{"removed":true}"#.utf8))
        }
        return router
    }
}
