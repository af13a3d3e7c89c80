import StreamKitDASH
import StreamKitHLS
import StreamKitHTTP

extension MediaCache {
    /// Caches the first `seconds` of an MPEG-DASH presentation ahead of playback: the MPD (kept
    /// as a playlist is, so that `/proxy/dash` serves it offline), then for every Representation
    /// of the first Period's video, audio and text sets (a DASH player picks among them itself,
    /// and offline it finds what it picks), its initialization and segments until `seconds` are
    /// covered; a SegmentBase's `sidx` is cached and read for the byte ranges.
    ///
    /// - Parameters:
    ///   - top: The MPD as fetched.
    ///   - url: The MPD's URL as asked.
    ///   - seconds: How much media to cache from the start.
    /// - Throws: ``MediaCacheError`` when the MPD cannot be read or a fetch fails.
    func preloadDASH(_ top: MediaCachePlaylist, url: String, seconds: Double) async throws -> MediaCacheHLSPreload {
        var summary = MediaCacheHLSPreload(playlists: 1, segments: 0, seconds: 0, bytes: 0)
        let mpd: MPD
        do {
            mpd = try MPD.parse(top.bytes)
        } catch {
            throw MediaCacheError(.originFailed, subject: url, detail: "not an MPD: \(error.reason)")
        }
        let presentation = DASHPresentation(mpd: mpd, mpdURL: top.url)
        var mediaPlaylists: [(MediaPlaylist, String)] = []
        for (setIndex, set) in (mpd.periods.first?.adaptationSets ?? []).enumerated()
        where ["video", "audio", "text"].contains(set.kind) {
            for position in set.representations.indices {
                let key = DASHPresentation.Key(adaptationSet: setIndex, representation: position)
                do {
                    var indexes: [String: SegmentIndex] = [:]
                    for request in try presentation.indexRequests(for: key) {
                        guard let range = request.range else { continue }
                        let read = try await self.read(
                            request.url, range: .closed(first: range.first, last: range.last))
                        var bytes: [UInt8] = []
                        for try await chunk in read.body { bytes += chunk }
                        summary.bytes += Int64(bytes.count)
                        indexes[request.identity] = try SegmentIndex.parse(bytes, fileOffset: range.first)
                    }
                    let playlist = try presentation.mediaPlaylist(for: key, indexes: indexes)
                    mediaPlaylists.append((playlist, presentation.url(of: key)))
                } catch let error as SegmentResolutionError {
                    throw MediaCacheError(.originFailed, subject: url, detail: "Representation \(key): \(error.reason)")
                }
            }
        }
        try await preloadSegments(of: mediaPlaylists, seconds: seconds, into: &summary)
        return summary
    }
}
