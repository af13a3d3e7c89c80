import StreamKitDASH
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaCache

extension ProxyRoutes {
    /// `/proxy/dash?url=ENCODED`: the MPD (fetched through the cache like a playlist, so that it
    /// is there offline) with every segment, initialization and SegmentBase file URL made absolute
    /// and sent through the file route, whose Range support serves byte ranges and `sidx`
    /// indexes. A template keeps its `$Number$`, `$Time$` identifiers in the query value, for
    /// the player to fill in. The URLs name this server by the request's Host (already checked to
    /// be this server's), because DASH players join relative URLs in ways of their own.
    static func mpd(
        _ request: HTTPServerRequest, cache: MediaCache, policy: ProxyRequestPolicy
    ) async throws -> HTTPServerResponse {
        let url = try policy.target(of: request)
        let fetched: MediaCachePlaylist
        switch try await document(url, cache: cache) {
        case .fetched(let document): fetched = document
        case .refused(let response): return response
        }
        let parsed: MPD
        do {
            parsed = try MPD.parse(fetched.bytes)
        } catch {
            return .status(.badGateway, message: "\(url) is not a DASH MPD: \(error.reason)")
        }
        let origin = "http://" + (request.headers["Host"] ?? "127.0.0.1")
        let rewritten = parsed.withAbsoluteURLs(mpdURL: fetched.url) { target in
            let scheme = target.prefix { $0 != ":" }.lowercased()
            guard scheme == "http" || scheme == "https" else { return target }
            return origin + filePath + "?url=" + Self.templateEncoded(target)
        }
        return rewrittenDocument(rewritten.serialized(), contentType: "application/dash+xml", from: fetched)
    }

    /// `target` percent-encoded for a query value, but for its `$…$` template identifiers, which
    /// the player replaces (`$Number%05d$` stays as it is; the number it becomes needs no
    /// encoding).
    static func templateEncoded(_ target: String) -> String {
        var result = ""
        var rest = Substring(target)
        while let open = rest.firstIndex(of: "$"),
            let close = rest[rest.index(after: open)...].firstIndex(of: "$")
        {
            result += HLSProxyRewriter.percentEncoded(String(rest[..<open]))
            result += rest[open...close]
            rest = rest[rest.index(after: close)...]
        }
        return result + HLSProxyRewriter.percentEncoded(String(rest))
    }
}
