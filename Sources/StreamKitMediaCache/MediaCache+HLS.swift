import Foundation
import StreamKitCore
import StreamKitDASH
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// A playlist's bytes as fetched (or, with the origin unreachable, as cached last time).
public struct MediaCachePlaylist: Sendable {
    /// The playlist file.
    public let bytes: [UInt8]
    /// The URL it came from, after redirects: what its relative URIs resolve against.
    public let url: String
    /// Whether it came from the cache because the origin could not be reached.
    public let isFromCache: Bool
}

/// What ``MediaCache/preloadHLS(_:seconds:)`` cached.
public struct MediaCacheHLSPreload: Hashable, Sendable {
    /// Playlists fetched (the multivariant one and the media playlists chosen).
    public var playlists: Int
    /// Segments cached (init maps and keys not counted).
    public var segments: Int
    /// Seconds of media those segments hold, per media playlist (the longest).
    public var seconds: Double
    /// Bytes cached for them.
    public var bytes: Int64
}

extension MediaCache {
    /// Fetches a playlist whole, keeping a copy; when the origin cannot be reached (or answers
    /// with a server error) the copy kept last time is returned instead, so that a stream played
    /// once plays again offline. Playlists are always asked of the origin first: live ones change.
    ///
    /// - Parameters:
    ///   - url: The playlist's http or https URL.
    ///   - limit: The most bytes accepted.
    /// - Throws: ``MediaCacheError``: `originStatus` (a 4xx), `originFailed` with nothing cached.
    public func playlist(_ url: String, limit: Int = 16 << 20) async throws -> MediaCachePlaylist {
        try Self.checkURL(url)
        let key = configuration.keyFunction.key(for: url)
        let request = HTTPClientRequest(url: url, headers: configuration.requestHeaders)
        var failure: MediaCacheError
        // With a copy to fall back on, one attempt: a player offline waits for no retry delay on
        // every reload (a stale live playlist is reloaded again soon anyway).
        let attempts = hasWholeCopy(key: key) ? 1 : 2
        do {
            let (head, body) = try await client.data(
                for: request, limit: limit,
                retry: HTTPClientRetryPolicy(maximumAttempts: attempts, initialDelay: .milliseconds(100)))
            if head.status.isSuccess {
                // Stored as decoded; its validators describe the encoded form, so none are kept.
                let metadata = MediaCacheMetadata(
                    length: Int64(body.count), mimeType: head.headers["Content-Type"], finalURL: head.url)
                _ = store.storeWhole(
                    key: key, url: url, metadata: metadata, bytes: body, now: Date().timeIntervalSince1970)
                return MediaCachePlaylist(bytes: body, url: head.url, isFromCache: false)
            }
            let status = MediaCacheError(.originStatus, subject: url, status: head.status)
            guard head.status.isServerError else { throw status }
            failure = status
        } catch let error as MediaCacheError {
            throw error
        } catch {
            failure = MediaCacheError.originFailure(error, url: url)
            // A refused origin is not unavailable: its cached copy is not served either.
            if failure.kind == .destinationRefused { throw failure }
        }
        if let cached = cachedWhole(key: key) {
            configuration.logger.info("\(url): origin unavailable (\(failure)); using the cached copy")
            return MediaCachePlaylist(bytes: cached.bytes, url: cached.url, isFromCache: true)
        }
        throw failure
    }

    /// Caches the first `seconds` of an HLS stream ahead of playback: the playlists, then for
    /// the first variant (the one players start with) and its default audio and subtitle
    /// renditions, the init maps, keys and segments until `seconds` of media are covered. An
    /// MPEG-DASH MPD at `url` is preloaded as ``preloadDASH(_:url:seconds:)`` says.
    ///
    /// - Parameters:
    ///   - url: The multivariant or media playlist, or an MPD.
    ///   - seconds: How much media to cache from the start.
    /// - Returns: What was cached.
    /// - Throws: ``MediaCacheError`` when a playlist cannot be fetched or parsed, or a segment fails.
    @discardableResult
    public func preloadHLS(_ url: String, seconds: Double) async throws -> MediaCacheHLSPreload {
        var summary = MediaCacheHLSPreload(playlists: 0, segments: 0, seconds: 0, bytes: 0)
        let top = try await playlist(url)
        if MPD.looksLikeMPD(top.bytes) { return try await preloadDASH(top, url: url, seconds: seconds) }
        summary.playlists += 1
        var mediaPlaylists: [(MediaPlaylist, String)] = []
        switch try Self.parse(top, url: url) {
        case .media(let media):
            mediaPlaylists.append((media, top.url))
        case .multivariant(let multivariant):
            guard let variant = multivariant.variants.first else { return summary }
            var uris = [resolveURI(variant.uri, against: top.url)]
            for group in [variant.audio, variant.subtitles].compactMap({ $0 }) {
                let candidates = multivariant.renditions.filter { $0.groupID == group && $0.uri != nil }
                if let chosen = candidates.first(where: \.isDefault) ?? candidates.first, let uri = chosen.uri {
                    uris.append(resolveURI(uri, against: top.url))
                }
            }
            for uri in uris {
                let fetched = try await playlist(uri)
                summary.playlists += 1
                if case .media(let media) = try Self.parse(fetched, url: uri) {
                    mediaPlaylists.append((media, fetched.url))
                }
            }
        }
        try await preloadSegments(of: mediaPlaylists, seconds: seconds, into: &summary)
        return summary
    }

    /// Caches each media playlist's maps, keys and segments from its start until `seconds` of
    /// media are covered.
    func preloadSegments(
        of mediaPlaylists: [(MediaPlaylist, String)], seconds: Double, into summary: inout MediaCacheHLSPreload
    ) async throws {
        var seen = Set<String>()
        for (media, base) in mediaPlaylists {
            var covered = 0.0
            for segment in media.resolvedSegments(baseURL: base) where !segment.isGap {
                guard covered < seconds else { break }
                if let map = segment.map, seen.insert("map \(map.uri) \(map.byteRange?.description ?? "")").inserted {
                    summary.bytes += try await preload(map.uri, range: map.byteRange)
                }
                for key in segment.keys {
                    guard let uri = key.uri, uri.hasPrefix("http"), seen.insert("key \(uri)").inserted else { continue }
                    summary.bytes += try await preload(uri, range: nil)
                }
                summary.bytes += try await preload(segment.uri, range: segment.byteRange)
                summary.segments += 1
                covered += segment.duration
            }
            summary.seconds = max(summary.seconds, covered)
        }
    }

    func preload(_ url: String, range: ByteRange?) async throws -> Int64 {
        guard let range else { return try await preload(url, byteCount: nil) }
        let read = try await self.read(url, range: .closed(first: range.lowerBound, last: range.upperBound - 1))
        var count: Int64 = 0
        for try await chunk in read.body { count += Int64(chunk.count) }
        return count
    }

    private static func parse(_ playlist: MediaCachePlaylist, url: String) throws -> Playlist {
        do {
            return try Playlist.parse(
                playlist.bytes, options: PlaylistParseOptions(playlistURL: URL(string: playlist.url))
            )
            .playlist
        } catch {
            throw MediaCacheError(.originFailed, subject: url, detail: "not a playlist: \(error)")
        }
    }

    /// Whether every byte of `key` is cached.
    func hasWholeCopy(key: String) -> Bool {
        guard let snapshot = store.snapshot(forKey: key), let metadata = snapshot.metadata else { return false }
        return snapshot.written.contains(ByteRange(0, metadata.length))
    }

    /// The whole cached copy of `key`, when every byte of it is on disk.
    func cachedWhole(key: String) -> (bytes: [UInt8], url: String)? {
        guard let snapshot = store.snapshot(forKey: key), let metadata = snapshot.metadata, let path = snapshot.path,
            snapshot.written.contains(ByteRange(0, metadata.length)),
            let data = FileManager.default.contents(atPath: path), data.count >= Int(metadata.length)
        else { return nil }
        return (Array(data.prefix(Int(metadata.length))), metadata.finalURL)
    }
}
