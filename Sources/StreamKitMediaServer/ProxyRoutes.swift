import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaCache

/// The caching proxy's routes (docs/CLI.md): `/proxy/file?url=ENCODED` serves a remote file
/// through the cache, honouring the player's Range (206 with Content-Range, 416, HEAD,
/// conditional requests); `/proxy/hls?url=ENCODED` serves a remote playlist rewritten so that
/// every playlist, segment, key and map it names goes through these routes too; `/proxy/dash?url=`
/// does the same for an MPEG-DASH MPD (``mpd(_:cache:policy:)``).
///
/// The proxy must not become a door into the user's network for web pages. The server's Host
/// check already refuses requests that name another host (DNS rebinding); these routes add no
/// CORS headers of their own (the server adds them only for configured origins), refuse requests
/// whose `Origin`, `Sec-Fetch-Site` or `Referer` shows another site (``CrossSiteCheck``), and fetch
/// only http and https URLs.
public enum ProxyRoutes {
    /// The path of the file route.
    public static let filePath = "/proxy/file"
    /// The path of the playlist route.
    public static let playlistPath = "/proxy/hls"
    /// The path of the MPD route.
    public static let mpdPath = "/proxy/dash"

    /// The routes, serving through `cache`.
    ///
    /// - Parameters:
    ///   - cache: The media cache.
    ///   - allowedOrigins: Web origins whose pages may use the proxy (the server's CORS origins).
    ///   - loopbackClientsOnly: Refuse clients on other machines (for a server listening on a
    ///     network address: the proxy would open the user's loopback services to the network).
    public static func routes(
        cache: MediaCache, allowedOrigins: [String] = [], loopbackClientsOnly: Bool = false
    ) -> HTTPRouter {
        let policy = ProxyRequestPolicy(allowedOrigins: allowedOrigins, loopbackClientsOnly: loopbackClientsOnly)
        var router = HTTPRouter()
        router.get(filePath) { request in
            ContainedContent.contained(try await file(request, cache: cache, policy: policy))
        }
        router.get(playlistPath) { request in
            ContainedContent.contained(try await playlist(request, cache: cache, policy: policy))
        }
        router.get(mpdPath) { request in
            ContainedContent.contained(try await mpd(request, cache: cache, policy: policy))
        }
        return router
    }

    /// The proxy URL (path and query) that plays `url` through these routes: the playlist route
    /// for `.m3u8`/`.m3u` URLs and when `isPlaylist`, the file route otherwise.
    public static func localPath(for url: String, isPlaylist: Bool? = nil) -> String {
        let path = URLComponents(string: url)?.path.lowercased() ?? ""
        let playlist = isPlaylist ?? (path.hasSuffix(".m3u8") || path.hasSuffix(".m3u"))
        return (playlist ? playlistPath : filePath) + "?url=" + HLSProxyRewriter.percentEncoded(url)
    }

    // MARK: Files

    static func file(
        _ request: HTTPServerRequest, cache: MediaCache, policy: ProxyRequestPolicy
    ) async throws
        -> HTTPServerResponse
    {
        let url = try policy.target(of: request)
        do {
            if let metadata = cache.cachedMetadata(for: url) {
                return try await known(request, url: url, metadata: metadata, cache: cache)
            }
            return try await unknown(request, url: url, cache: cache)
        } catch let error as MediaCacheError {
            return response(for: error)
        }
    }

    /// A resource the cache describes: answered without asking the origin (offline too).
    private static func known(
        _ request: HTTPServerRequest, url: String, metadata: MediaCacheMetadata, cache: MediaCache
    ) async throws -> HTTPServerResponse {
        let validators = HTTPFileValidators(
            length: metadata.length, entityTag: entityTag(metadata, url: url),
            lastModified: Int64(metadata.lastModified?.timeIntervalSince1970 ?? 0))
        var headers = baseHeaders(metadata, url: url, validators: validators)
        let range: ByteRange
        var status = HTTPStatus.ok
        switch HTTPConditionalRequest.evaluate(method: request.method, headers: request.headers, validators: validators)
        {
        case .notModified:
            headers.remove("Content-Type")
            headers.remove("Accept-Ranges")
            return HTTPServerResponse(status: .notModified, headers: headers)
        case .preconditionFailed:
            return .status(.preconditionFailed)
        case .unsatisfiable:
            var response = HTTPServerResponse.status(.rangeNotSatisfiable)
            response.headers.add("Content-Range", ContentRange.unsatisfied(completeLength: metadata.length).headerValue)
            return response
        case .whole:
            range = ByteRange(0, metadata.length)
        case .part(let part):
            range = part
            status = .partialContent
            headers.add("Content-Range", ContentRange(range: part, completeLength: metadata.length).headerValue)
        }
        if request.method == .head {
            headers.add("Content-Length", "\(range.count)")
            return HTTPServerResponse(status: status, headers: headers, body: .stream(HTTPBodyStream { _ in }))
        }
        if let region = cache.cachedFileRegion(for: url, range: range) {
            headers.add("X-StreamKit-Cache", "hit")
            return HTTPServerResponse(status: status, headers: headers, body: .file(region))
        }
        let read = try await cache.read(
            url, range: range.isEmpty ? nil : .closed(first: range.lowerBound, last: range.upperBound - 1))
        headers.add("X-StreamKit-Cache", read.source == .cache ? "hit" : "partial")
        return streamed(read, status: status, headers: headers, length: range.count)
    }

    /// A resource the cache knows nothing of yet: the player's range goes to the origin, whose
    /// first response describes it.
    private static func unknown(
        _ request: HTTPServerRequest, url: String, cache: MediaCache
    ) async throws
        -> HTTPServerResponse
    {
        if request.method == .head {
            guard let metadata = try await cache.metadata(for: url) else {
                return HTTPServerResponse(status: .ok, headers: ["Accept-Ranges": "bytes"])
            }
            let validators = HTTPFileValidators(
                length: metadata.length, entityTag: entityTag(metadata, url: url),
                lastModified: Int64(metadata.lastModified?.timeIntervalSince1970 ?? 0))
            var headers = baseHeaders(metadata, url: url, validators: validators)
            headers.add("Content-Length", "\(metadata.length)")
            return HTTPServerResponse(status: .ok, headers: headers, body: .stream(HTTPBodyStream { _ in }))
        }
        // One range is passed on; several, or a conditional range that cannot be judged yet, get the whole.
        var specifier: RangeRequest.Specifier?
        if request.headers["If-Range"] == nil, let text = request.headers["Range"],
            let ranges = RangeRequest(headerValue: text), ranges.specifiers.count == 1
        {
            specifier = ranges.specifiers[0]
        }
        let read = try await cache.read(url, range: specifier)
        guard let metadata = read.metadata, let range = read.range else {
            // The origin gave no length: relayed as it comes, nothing kept.
            var headers: HTTPHeaders = ["X-StreamKit-Cache": "pass"]
            if let type = read.mimeType { headers.add("Content-Type", type) }
            var status = HTTPStatus.ok
            if let range = read.range {
                status = .partialContent
                headers.add("Content-Range", ContentRange(range: range, completeLength: nil).headerValue)
                headers.add("Content-Length", "\(range.count)")
            }
            return HTTPServerResponse(status: status, headers: headers, body: .stream(relay(read)))
        }
        let validators = HTTPFileValidators(
            length: metadata.length, entityTag: entityTag(metadata, url: url),
            lastModified: Int64(metadata.lastModified?.timeIntervalSince1970 ?? 0))
        var headers = baseHeaders(metadata, url: url, validators: validators)
        var status = HTTPStatus.ok
        if specifier != nil {
            status = .partialContent
            headers.add("Content-Range", ContentRange(range: range, completeLength: metadata.length).headerValue)
        }
        headers.add("X-StreamKit-Cache", read.source == .passThrough ? "pass" : "miss")
        return streamed(read, status: status, headers: headers, length: range.count)
    }

    private static func streamed(
        _ read: MediaCacheRead, status: HTTPStatus, headers: HTTPHeaders, length: Int64
    )
        -> HTTPServerResponse
    {
        var headers = headers
        headers.add("Content-Length", "\(length)")
        return HTTPServerResponse(status: status, headers: headers, body: .stream(relay(read)))
    }

    private static func relay(_ read: MediaCacheRead) -> HTTPBodyStream {
        HTTPBodyStream { writer in
            for try await part in read.body.parts {
                switch part {
                case .bytes(let bytes): try await writer.write(bytes)
                case .file(let region): try await writer.write(region)
                }
            }
        }
    }

    private static func baseHeaders(
        _ metadata: MediaCacheMetadata, url: String, validators: HTTPFileValidators
    )
        -> HTTPHeaders
    {
        var headers: HTTPHeaders = [
            "Content-Type": metadata.mimeType ?? HTTPMediaTypes.forFile(named: URLComponents(string: url)?.path ?? ""),
            "Accept-Ranges": "bytes",
            "ETag": validators.entityTag.headerValue,
        ]
        if let modified = metadata.lastModified { headers.add("Last-Modified", HTTPDate.format(modified)) }
        return headers
    }

    /// The origin's strong ETag, else one made from the URL, length and modification date.
    private static func entityTag(_ metadata: MediaCacheMetadata, url: String) -> EntityTag {
        if let tag = metadata.entityTag, !tag.isWeak { return tag }
        let seed = "\(url)|\(metadata.length)|\(metadata.lastModified?.timeIntervalSince1970 ?? 0)"
        return EntityTag(opaqueTag: "sk-" + String(SHA256.hash(Array(seed.utf8)).hexString.prefix(24)))
    }

    // MARK: Playlists

    static func playlist(
        _ request: HTTPServerRequest, cache: MediaCache, policy: ProxyRequestPolicy
    ) async throws
        -> HTTPServerResponse
    {
        let url = try policy.target(of: request)
        let fetched: MediaCachePlaylist
        switch try await document(url, cache: cache) {
        case .fetched(let document): fetched = document
        case .refused(let response): return response
        }
        let parsed: ParsedPlaylist
        do {
            parsed = try Playlist.parse(
                fetched.bytes, options: PlaylistParseOptions(playlistURL: URL(string: fetched.url)))
        } catch {
            return .status(.badGateway, message: "\(url) is not an HLS playlist: \(error)")
        }
        let rewritten = HLSProxyRewriter(fileRoute: filePath, playlistRoute: playlistPath)
            .rewrite(parsed.playlist, playlistURL: fetched.url)
        return rewrittenDocument(
            rewritten.serialized(), contentType: "application/vnd.apple.mpegurl", from: fetched)
    }

    /// A playlist or MPD fetched through the cache, or the response that says why it was not.
    enum FetchedDocument {
        case fetched(MediaCachePlaylist)
        case refused(HTTPServerResponse)
    }

    /// A playlist or MPD through the cache (there offline once fetched), or the response a cache
    /// error makes; other errors are thrown.
    static func document(_ url: String, cache: MediaCache) async throws -> FetchedDocument {
        do {
            return .fetched(try await cache.playlist(url))
        } catch let error as MediaCacheError {
            return .refused(response(for: error))
        }
    }

    /// A rewritten playlist or MPD, never cached by the player, saying whether the cache held it.
    static func rewrittenDocument(
        _ text: String, contentType: String, from fetched: MediaCachePlaylist
    ) -> HTTPServerResponse {
        HTTPServerResponse(
            status: .ok,
            headers: [
                "Content-Type": contentType, "Cache-Control": "no-cache",
                "X-StreamKit-Cache": fetched.isFromCache ? "hit" : "miss",
            ],
            body: .bytes(Array(text.utf8)))
    }

    // MARK: Errors

    static func response(for error: MediaCacheError) -> HTTPServerResponse {
        switch error.kind {
        case .unsupportedURL:
            return .status(.badRequest, message: error.description)
        case .rangeNotSatisfiable:
            var response = HTTPServerResponse.status(.rangeNotSatisfiable)
            if let length = error.length {
                response.headers.add("Content-Range", ContentRange.unsatisfied(completeLength: length).headerValue)
            }
            return response
        case .originStatus:
            // The origin's client errors are the player's too; anything else is a bad gateway.
            if let status = error.status, status.isClientError { return .status(status, message: error.description) }
            return .status(.badGateway, message: error.description)
        case .removed:
            return .status(.serviceUnavailable, message: error.description)
        case .destinationRefused:
            return .status(.forbidden, message: error.description)
        default:
            return .status(.badGateway, message: error.description)
        }
    }
}

/// Who may use the proxy, and what it may fetch.
struct ProxyRequestPolicy: Sendable {
    let sites: CrossSiteCheck
    let loopbackClientsOnly: Bool

    init(allowedOrigins: [String], loopbackClientsOnly: Bool = false) {
        sites = CrossSiteCheck(allowedOrigins: allowedOrigins)
        self.loopbackClientsOnly = loopbackClientsOnly
    }

    /// Whether `address` (`host:port` as the server reports a peer) is this machine.
    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address.hasPrefix("[::1]:") || address.hasPrefix("[::ffff:127.")
    }

    /// The `url` parameter of a request that may use the proxy.
    ///
    /// - Throws: ``HTTPResponseError``: 403 for a web page of another origin, a client on another
    ///   machine (with `loopbackClientsOnly`) or a request this process's cache made; 400 for a
    ///   missing or non-http(s) URL.
    func target(of request: HTTPServerRequest) throws(HTTPResponseError) -> String {
        if loopbackClientsOnly && !Self.isLoopback(request.remoteAddress) {
            throw HTTPResponseError(.forbidden, message: "the caching proxy serves this machine only")
        }
        if let via = request.headers["Via"], via.contains(MediaCache.requestMark) {
            // This process's cache asking its own proxy: an origin redirected it here, or a
            // playlist points at the proxy. Followed, it would fetch through itself forever.
            throw HTTPResponseError(.forbidden, message: "the proxy does not fetch through itself")
        }
        try sites.check(request, serving: "the proxy")
        guard let url = request.queryValue("url"), !url.isEmpty else {
            throw HTTPResponseError(.badRequest, message: "url= names the http or https URL to fetch")
        }
        guard !URLUserInfo.isPresent(in: url) else {
            throw HTTPResponseError(
                .badRequest, message: "\(URLUserInfo.refusal); send an Authorization header instead")
        }
        if let reason = MediaCache.unfetchableReason(url) {
            throw HTTPResponseError(.badRequest, message: "\(reason), not '\(url)'")
        }
        return url
    }
}
