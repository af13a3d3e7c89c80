import StreamKitCore
import StreamKitHLS

/// Rewrites a playlist so that a player fetches everything it names through the caching proxy:
/// nested playlists (variants, renditions, I-frame playlists, rendition reports) through the
/// playlist route, and segments, partial segments, keys, maps, preload hints and session data
/// through the file route (RFC 8216bis §4.4 lists every tag that carries a URI).
///
/// Every URI is first resolved against the playlist's own URL (after redirects): the rewritten
/// playlist is served from the proxy, where a relative reference would resolve to the wrong place.
/// Only http and https targets are proxied; others (`data:`, `skd:` key URIs) are left resolved.
/// Byte ranges stay as they are, with their offsets made explicit, since the file route honours
/// the player's Range. Variables taken from the playlist URL's query (`QUERYPARAM`) become plain
/// definitions, as the proxy URL has no such query.
///
/// ```swift
/// let rewritten = HLSProxyRewriter().rewrite(playlist, playlistURL: "https://cdn.example/v/index.m3u8")
/// // segment "seg0.ts" becomes "/proxy/file?url=https%3A%2F%2Fcdn.example%2Fv%2Fseg0.ts"
/// ```
public struct HLSProxyRewriter: Sendable {
    /// The route that serves files through the cache.
    public var fileRoute: String
    /// The route that serves rewritten playlists.
    public var playlistRoute: String

    /// A rewriter for the given routes (`/proxy/file` and `/proxy/hls` by default).
    public init(fileRoute: String = "/proxy/file", playlistRoute: String = "/proxy/hls") {
        self.fileRoute = fileRoute
        self.playlistRoute = playlistRoute
    }

    /// The rewritten playlist.
    ///
    /// - Parameters:
    ///   - playlist: The playlist as parsed.
    ///   - playlistURL: The absolute URL it was loaded from, after redirects.
    public func rewrite(_ playlist: Playlist, playlistURL: String) -> Playlist {
        switch playlist {
        case .media(let media): .media(rewrite(media, playlistURL: playlistURL))
        case .multivariant(let multivariant): .multivariant(rewrite(multivariant, playlistURL: playlistURL))
        }
    }

    /// The proxy URL (a path with a query) for `reference` as written in a playlist loaded from `base`.
    ///
    /// - Parameters:
    ///   - reference: The URI as written.
    ///   - base: The playlist's URL.
    ///   - isPlaylist: Whether it names a playlist (the playlist route) or anything else (the file route).
    /// - Returns: The proxy URL, or the resolved reference when it is not http(s).
    public func proxied(_ reference: String, base: String, isPlaylist: Bool) -> String {
        let target = resolveURI(reference, against: base)
        let scheme = target.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https" else { return target }
        return (isPlaylist ? playlistRoute : fileRoute) + "?url=" + Self.percentEncoded(target)
    }

    /// `text` with every byte outside RFC 3986's unreserved set percent-encoded (for a query value).
    public static func percentEncoded(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count * 3 / 2)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E:
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return result
    }

    // MARK: Private

    private func rewrite(_ playlist: MediaPlaylist, playlistURL base: String) -> MediaPlaylist {
        var result = playlist
        result.definitions = plain(playlist.definitions)
        let resolved = playlist.resolvedSegments(baseURL: base)
        for index in result.segments.indices {
            var segment = result.segments[index]
            if let range = resolved[index].byteRange {
                segment.byteRange = SegmentByteRange(length: range.count, offset: range.lowerBound)
            }
            segment.uri = proxied(segment.uri, base: base, isPlaylist: false)
            if !segment.keys.isEmpty { segment.keys = proxying(segment.keys, \.uri, base: base, isPlaylist: false) }
            if let map = segment.map { segment.map = self.map(map, base: base) }
            if !segment.parts.isEmpty { segment.parts = proxying(segment.parts, \.uri, base: base, isPlaylist: false) }
            result.segments[index] = segment
        }
        var pending = result.pendingSegment
        pending.keys = proxying(pending.keys, \.uri, base: base, isPlaylist: false)
        pending.map = pending.map.map { map($0, base: base) }
        pending.parts = proxying(pending.parts, \.uri, base: base, isPlaylist: false)
        result.pendingSegment = pending
        result.preloadHints = proxying(result.preloadHints, \.uri, base: base, isPlaylist: false)
        result.renditionReports = proxying(result.renditionReports, \.uri, base: base, isPlaylist: true)
        return result
    }

    private func rewrite(_ playlist: MultivariantPlaylist, playlistURL base: String) -> MultivariantPlaylist {
        var result = playlist
        result.definitions = plain(playlist.definitions)
        result.variants = proxying(result.variants, \.uri, base: base, isPlaylist: true)
        result.iFrameVariants = proxying(result.iFrameVariants, \.uri, base: base, isPlaylist: true)
        result.renditions = proxying(result.renditions, \.uri, base: base, isPlaylist: true)
        result.sessionData = proxying(result.sessionData, \.uri, base: base, isPlaylist: false)
        result.sessionKeys = proxying(result.sessionKeys, \.uri, base: base, isPlaylist: false)
        // The steering manifest changes over time and names pathways, not media: resolved, not cached.
        if var steering = result.contentSteering {
            steering.serverURI = resolveURI(steering.serverURI, against: base)
            result.contentSteering = steering
        }
        return result
    }

    private func plain(_ definitions: [VariableDefinition]) -> [VariableDefinition] {
        definitions.map { definition in
            var definition = definition
            if definition.source == .queryParameter { definition.source = .value }
            return definition
        }
    }

    private func map(_ map: MediaInitialization, base: String) -> MediaInitialization {
        var map = map
        map.uri = proxied(map.uri, base: base, isPlaylist: false)
        if let range = map.byteRange, range.offset == nil {
            map.byteRange = SegmentByteRange(length: range.length, offset: 0)
        }
        return map
    }

    /// `items` with the URI at `uri` of each proxied.
    private func proxying<Item>(
        _ items: [Item], _ uri: WritableKeyPath<Item, String>, base: String, isPlaylist: Bool
    ) -> [Item] {
        items.map { item in
            var item = item
            item[keyPath: uri] = proxied(item[keyPath: uri], base: base, isPlaylist: isPlaylist)
            return item
        }
    }

    /// `items` with the URI at `uri` of each proxied, where there is one.
    private func proxying<Item>(
        _ items: [Item], _ uri: WritableKeyPath<Item, String?>, base: String, isPlaylist: Bool
    ) -> [Item] {
        items.map { item in
            var item = item
            item[keyPath: uri] = item[keyPath: uri].map { proxied($0, base: base, isPlaylist: isPlaylist) }
            return item
        }
    }
}
