/// Media types for the files StreamKit serves, by file extension.
public enum HTTPMediaTypes {
    /// What a file with an unknown extension is sent as.
    public static let fallback = "application/octet-stream"

    /// Extension (lowercase, without the dot) to media type.
    public static let byExtension: [String: String] = [
        // HLS playlists (RFC 8216bis §4) and segments.
        "m3u8": "application/vnd.apple.mpegurl",
        "m3u": "application/vnd.apple.mpegurl",
        "ts": "video/mp2t",
        "m4s": "video/iso.segment",  // IANA registration for fragmented MP4 media segments
        "mp4": "video/mp4",
        "m4v": "video/mp4",
        "m4a": "audio/mp4",
        "aac": "audio/aac",
        "mp3": "audio/mpeg",
        "ac3": "audio/ac3",
        "ec3": "audio/eac3",
        "vtt": "text/vtt; charset=utf-8",
        "webvtt": "text/vtt; charset=utf-8",
        // AES-128 keys: raw 16 bytes, no registered type.
        "key": "application/octet-stream",
        // Other media the library may hold.
        "flv": "video/x-flv",
        "mkv": "video/x-matroska",
        "webm": "video/webm",
        "mpd": "application/dash+xml",
        // Pages and data.
        "html": "text/html; charset=utf-8",
        "txt": "text/plain; charset=utf-8",
        "json": "application/json",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "png": "image/png",
    ]

    /// The media type of a file named `name`.
    public static func forFile(named name: some StringProtocol) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        let fileExtension = name[name.index(after: dot)...]
        if fileExtension.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) {
            return byExtension[fileExtension.lowercased()] ?? fallback
        }
        return byExtension[String(fileExtension)] ?? fallback
    }
}
