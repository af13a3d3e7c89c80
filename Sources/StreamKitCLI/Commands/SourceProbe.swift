import Foundation
import StreamKitDASH
import StreamKitDownloads
import StreamKitHTTP
import StreamKitHTTPClient

/// Tells a streaming presentation (an HLS playlist or a DASH MPD, both downloaded into a package)
/// from a progressive file, for `streamkit download`.
enum SourceProbe {
    /// Extensions downloaded as files without asking the server.
    static let fileExtensions: Set<String> = [
        "mp4", "m4v", "m4a", "mov", "mkv", "webm", "avi", "flv", "ts", "m2ts", "mp3", "aac", "flac", "wav", "ogg",
        "opus", "bin", "zip", "gz", "tgz", "xz", "iso", "dmg", "pdf", "jpg", "jpeg", "png", "gif",
    ]
    /// Content types of HLS playlists (RFC 8216bis §4: the first two; the rest seen in the wild),
    /// and of an MPD (ISO/IEC 23009-1 Annex C).
    static let playlistTypes: Set<String> = [
        "application/vnd.apple.mpegurl", "audio/mpegurl", "application/x-mpegurl", "audio/x-mpegurl",
        "application/mpegurl", dashType,
    ]
    /// The Content-Type of an MPD.
    static let dashType = "application/dash+xml"

    /// What `url` is: an HLS playlist when its path ends in `.m3u8` or `.m3u`, a DASH MPD when it
    /// ends in `.mpd`; or, for a path without a known file extension, what the server's answer to
    /// a GET says: a playlist or MPD Content-Type, or a body that starts with `#EXTM3U` or an
    /// `<MPD>` element (the probe reads the first bytes and stops); else a file. The package's
    /// engine tells HLS from DASH by content: this is what the task is called.
    static func kind(
        of url: String, client: HTTPClient, headers: HTTPHeaders, retry: HTTPClientRetryPolicy
    ) async -> DownloadKind {
        let path = URLComponents(string: url)?.path ?? ""
        let ext = path.split(separator: "/").last.flatMap { name in
            name.contains(".") ? name.split(separator: ".").last.map { $0.lowercased() } : nil
        }
        if let ext {
            if ext == "m3u8" || ext == "m3u" { return .hls }
            if ext == "mpd" { return .dash }
            if fileExtensions.contains(ext) { return .file }
        }
        guard let response = try? await client.execute(HTTPClientRequest(url: url, headers: headers), retry: retry)
        else { return .file }
        defer { response.body.cancel() }
        guard response.status.isSuccess else { return .file }
        if let type = response.headers["Content-Type"]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased(), playlistTypes.contains(type)
        {
            return type == dashType ? .dash : .hls
        }
        var iterator = response.body.makeAsyncIterator()
        var prefix: [UInt8] = []
        while prefix.count < 4096, let chunk = try? await iterator.next() { prefix += chunk }
        if looksLikePlaylist(prefix) { return .hls }
        return MPD.looksLikeMPD(prefix) ? .dash : .file
    }

    /// Whether `bytes` start with `#EXTM3U` after a byte order mark and white space.
    static func looksLikePlaylist(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        rest = rest.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return rest.starts(with: Array("#EXTM3U".utf8))
    }
}
