import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaCache

/// The offline media server: the library under `/library/ID/...`, the library page at `/`, the
/// caching proxy's `/proxy/file` and `/proxy/hls` when given a ``MediaCache``, and whatever routes
/// the caller adds (the queue's `/api/...`).
///
/// ```swift
/// let server = try MediaServer.start(configuration: .init(libraryRoot: "/path/to/library"))
/// print(server.baseURL, server.accessToken)
/// await server.shutdown()
/// ```
public final class MediaServer: Sendable {
    /// Where the library is and how the HTTP server listens.
    public struct Configuration: Sendable {
        /// The library directory: one folder per item.
        public var libraryRoot: String
        /// The HTTP server's address, limits, allowed hosts and origins.
        public var http: HTTPServerConfiguration
        /// A file in which the library's items are kept between runs (``MediaLibrary``), so that
        /// the first page of a new process reads only what changed; none keeps them in memory only.
        public var libraryItemsFile: String?
        /// Reads a part of the download queue for the page and `GET /api/tasks`; none shows no queue.
        public var queue: (@Sendable (QueueTaskRequest) throws -> QueueTaskPage)?
        /// The cache the proxy routes read through; no proxy routes when `nil`.
        public var cache: MediaCache?
        /// Whether to run the proxy's path once at start, in the background, against a throwaway
        /// origin and cache (``ProxyWarmUp``), so that a player's first request is as quick as
        /// the next ones (``proxyWarmedUp()`` returns when it is done). For long-running servers
        /// (`streamkit serve`, `play`); off by default.
        public var warmsUpProxy = false
        /// Writes the package in a folder (given with its id) as one MP4 file and returns the
        /// file's path, for the player page's "Download as MP4" (`GET /watch/ID/video.mp4`); no
        /// such link or route when `nil`. `streamkit serve` gives ``PackageExport``'s.
        public var exportMP4: (@Sendable (_ folder: String, _ id: String) async throws -> String)?
        /// Makes a poster for a package that has no cover of its own (a frame, as a JPEG file)
        /// and returns the file's path, for the player page; none when `nil`. `streamkit serve`
        /// gives one that runs ffmpeg when it is installed.
        public var makePoster: (@Sendable (_ folder: String, _ id: String) async throws -> String)?
        /// Changes to the download queue the page and `/api/` may make (add, start, stop, remove,
        /// retry, concurrency); none when `nil` (the queue is then only shown).
        public var queueControl: QueueControl?
        /// Called with the cache's new cap when `PATCH /api/cache` changes it (serve remembers
        /// it for later commands).
        public var cacheLimitChanged: (@Sendable (Int64) -> Void)?

        /// Serves `libraryRoot` with the HTTP settings `http` (loopback, a free port by default),
        /// the queue `queue` reads, and the caching proxy when `cache` is given.
        public init(
            libraryRoot: String, http: HTTPServerConfiguration = HTTPServerConfiguration(),
            queue: (@Sendable (QueueTaskRequest) throws -> QueueTaskPage)? = nil, cache: MediaCache? = nil
        ) {
            self.libraryRoot = libraryRoot
            self.http = http
            self.queue = queue
            self.cache = cache
        }
    }

    /// The running HTTP server.
    public let http: HTTPServer
    /// The library it serves.
    public let library: MediaLibrary
    private let warmUp: Task<Void, Never>?
    private let feed: QueueEventFeed?

    private init(http: HTTPServer, library: MediaLibrary, warmUp: Task<Void, Never>?, feed: QueueEventFeed?) {
        self.http = http
        self.library = library
        self.warmUp = warmUp
        self.feed = feed
    }

    /// Returns once the proxy's warm-up (``Configuration/warmsUpProxy``) is over and everything
    /// it opened is closed and removed; at once when there is none.
    public func proxyWarmedUp() async {
        await warmUp?.value
    }

    /// `http://127.0.0.1:PORT/`.
    public var baseURL: String { http.baseURL }
    /// The port.
    public var port: UInt16 { http.port }
    /// The token routes that change state require (`Authorization: Bearer TOKEN`).
    public var accessToken: String { http.accessToken }

    /// Starts serving.
    ///
    /// - Parameters:
    ///   - configuration: The library and the HTTP settings.
    ///   - additionalRoutes: Routes tried after the library's own.
    ///   - logger: Where the server reports.
    /// - Throws: ``SystemError`` when the library is not a directory or the address cannot be bound.
    public static func start(
        configuration: Configuration, additionalRoutes: HTTPRouter = HTTPRouter(), logger: Logger = .disabled
    ) throws -> MediaServer {
        let library = try MediaLibrary(
            root: configuration.libraryRoot, rememberedItemsFile: configuration.libraryItemsFile)
        var router = try routes(
            for: library, queue: configuration.queue, allowedOrigins: configuration.http.allowedOrigins,
            exportMP4: configuration.exportMP4, makePoster: configuration.makePoster,
            queueControls: configuration.queueControl != nil, cacheControls: configuration.cache != nil)
        let sites = CrossSiteCheck(allowedOrigins: configuration.http.allowedOrigins)
        // One reader of the queue for every page listening to its changes.
        let feed = configuration.queue.map {
            QueueEventFeed(request: QueueTaskRequest(limit: LibraryPage.taskRows, unfinishedFirst: true), read: $0)
        }
        router.append(
            contentsOf: QueueRoutes.routes(
                queue: configuration.queue, control: configuration.queueControl, feed: feed, sites: sites,
                thisMachineAdds: !configuration.http.isLoopbackOnly))
        if let cache = configuration.cache {
            router.append(
                contentsOf: CacheRoutes.routes(
                    cache: cache, sites: sites, limitChanged: configuration.cacheLimitChanged))
            router.append(
                contentsOf: ProxyRoutes.routes(
                    cache: cache, allowedOrigins: configuration.http.allowedOrigins,
                    loopbackClientsOnly: !configuration.http.isLoopbackOnly))
        }
        router.append(contentsOf: additionalRoutes)
        var http = configuration.http
        http.jsonErrorPathPrefixes.append("/api/")
        let server: HTTPServer
        do {
            server = try HTTPServer.start(configuration: http, router: router, logger: logger)
        } catch {
            feed?.close()
            throw error
        }
        var warmUp: Task<Void, Never>?
        if let cache = configuration.cache, configuration.warmsUpProxy {
            warmUp = ProxyWarmUp.start(client: cache.client, logger: logger)
        }
        // The library's items are read once in the background, so that the first page is answered
        // from memory; nothing waits for it (a page asked for meanwhile reads what it needs).
        Task.detached(priority: .utility) { library.warmUp() }
        return MediaServer(http: server, library: library, warmUp: warmUp, feed: feed)
    }

    /// `response`, one of the server's own pages or their files, with the headers they need:
    /// their content policy (`'self'` only), no sniffing, no framing by other sites.
    static func page(_ response: HTTPServerResponse) -> HTTPServerResponse {
        var response = response
        response.headers.replaceOrAdd("Content-Security-Policy", WatchPage.contentSecurityPolicy)
        response.headers.replaceOrAdd("X-Content-Type-Options", "nosniff")
        response.headers.replaceOrAdd("X-Frame-Options", "DENY")
        return response
    }

    /// The library's routes and the server's pages, for composing into another router (``start``
    /// adds the queue's and the cache's `/api/` routes). `/api/` answers pages of `allowedOrigins`
    /// and of the server's own origin only (``CrossSiteCheck``). `queueControls` and
    /// `cacheControls` say whether the page at `/` offers to change the queue and the cache.
    public static func routes(
        for library: MediaLibrary, queue: (@Sendable (QueueTaskRequest) throws -> QueueTaskPage)? = nil,
        allowedOrigins: [String] = [], exportMP4: (@Sendable (String, String) async throws -> String)? = nil,
        makePoster: (@Sendable (String, String) async throws -> String)? = nil, queueControls: Bool = false,
        cacheControls: Bool = false
    ) throws -> HTTPRouter {
        let files = try HTTPStaticFileResponder(root: library.root)
        let sites = CrossSiteCheck(allowedOrigins: allowedOrigins)
        var router = HTTPRouter()
        router.get("/") { _ in
            // The tasks that need attention first, a bounded number: the page of a queue of ten
            // thousand costs what the page of a small one does.
            let tasks = try queue?(QueueTaskRequest(limit: LibraryPage.taskRows, unfinishedFirst: true))
            let controls = LibraryPage.Controls(queue: queueControls && tasks != nil, cache: cacheControls)
            return page(.html(LibraryPage.html(items: try library.items(), tasks: tasks, controls: controls)))
        }
        router.append(contentsOf: LibraryRoutes.routes(library: library, sites: sites))
        // Whatever a download brought is content, never a page of ours (``ContainedContent``).
        // The player page of a package, and the files the server's pages use (nothing inline:
        // the pages run under `default-src 'self'`).
        /// The package a `/watch/ID…` request names; 404 when the library has none.
        @Sendable func package(_ request: HTTPServerRequest) throws -> MediaLibraryItem {
            let id = request.rawRouteParameter("id").flatMap { $0.removingPercentEncoding } ?? ""
            guard let item = try library.items().first(where: { $0.id == id }) else {
                throw HTTPResponseError(.notFound, message: "No package \(id) in the library.")
            }
            return item
        }
        router.get("/watch/:id") { request in
            let item = try package(request)
            let tracks = PackageTracks.read(playlist: library.root + "/" + item.id + "/" + item.entry)
            let folder = library.root + "/" + item.id
            let hasPoster = makePoster != nil || PackagePoster.cover(in: folder) != nil
            return page(
                .html(WatchPage.html(item: item, tracks: tracks, offersMP4: exportMP4 != nil, hasPoster: hasPoster)))
        }
        // The package's cover (fetched with the download), else a frame `makePoster` makes.
        // Both may run ffmpeg: not for other sites' pages (an `<img>` or `<video>` there).
        router.get("/watch/:id/poster") { request in
            try sites.check(request, serving: "/watch/")
            let item = try package(request)
            let id = item.id
            let folder = library.root + "/" + item.id
            var file = PackagePoster.cover(in: folder)
            if file == nil, let makePoster { file = try? await makePoster(folder, item.id) }
            guard let file, let region = try? HTTPFileRegion(path: file) else {
                return page(.text("No poster for \(id).\n", status: .notFound))
            }
            return page(
                HTTPServerResponse(
                    status: .ok, headers: ["Content-Type": PackagePoster.contentType(of: file)], body: .file(region)))
        }
        if let exportMP4 {
            // The package as one MP4 file, written on the first request and kept (see
            // ``Configuration/exportMP4``), sent as a download named after its title.
            router.get("/watch/:id/video.mp4") { request in
                try sites.check(request, serving: "/watch/")
                let item = try package(request)
                let path: String
                do {
                    path = try await exportMP4(library.root + "/" + item.id, item.id)
                } catch {
                    return page(
                        .text("The package could not be written as MP4: \(error)\n", status: .internalServerError))
                }
                var response = HTTPServerResponse(
                    status: .ok, headers: ["Content-Type": "video/mp4"], body: .file(try HTTPFileRegion(path: path)))
                response.headers.replaceOrAdd(
                    "Content-Disposition", "attachment; filename=\"\(WatchPage.fileName(for: item.title)).mp4\"")
                return page(response)
            }
        }
        for (path, type, text) in [
            ("/static/app.css", "text/css", PageAssets.stylesheet),
            ("/static/watch.js", "text/javascript", PageAssets.watchScript),
            ("/static/library.js", "text/javascript", PageAssets.libraryScript),
            ("/static/queue.js", "text/javascript", PageAssets.queueScript),
        ] {
            let bytes = Array(text.utf8)
            router.get(path) { _ in
                page(
                    HTTPServerResponse(
                        status: .ok, headers: ["Content-Type": type + "; charset=utf-8"], body: .bytes(bytes)))
            }
        }
        router.get("/library") { _ in ContainedContent.contained(.redirect(to: "/")) }
        router.get("/library/:id") { request in
            ContainedContent.contained(
                .redirect(to: "/library/\(request.rawRouteParameter("id") ?? "")/\(MediaLibrary.entryName)"))
        }
        // Static files never wait on anything but the local disk's metadata: answered on the loop.
        router.add(
            .get, "/library/:id/*path",
            runsOnEventLoop: { request in
                if request.rawRouteParameter("path")?.isEmpty ?? true {
                    return ContainedContent.contained(.redirect(to: MediaLibrary.entryName))
                }
                // The item and the path inside it: the request's path after `/library/`, as sent.
                return ContainedContent.contained(
                    files.respond(to: request, rawPath: String(request.path.dropFirst("/library/".count))))
            })
        return router
    }

    /// Stops accepting and finishes the responses in flight (up to `gracePeriod`); event streams
    /// end at once.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        feed?.close()
        await http.shutdown(gracePeriod: gracePeriod)
    }

    /// Starts stopping (see ``shutdown(gracePeriod:)``) without waiting; ``waitUntilStopped()``
    /// returns once it is done.
    public func beginShutdown(gracePeriod: Duration = .seconds(10)) {
        feed?.close()
        http.beginShutdown(gracePeriod: gracePeriod)
    }

    /// Returns once the server has stopped.
    public func waitUntilStopped() async {
        await http.waitUntilStopped()
    }
}
