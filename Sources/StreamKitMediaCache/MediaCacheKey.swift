import Foundation
import StreamKitCore
import StreamKitHTTP

/// Turns a URL into the key its bytes are cached under: two URLs with the same key share one
/// cache entry.
///
/// The default is the URL itself. Token-signed URLs (a CDN's `?token=…&Expires=…&Signature=…`)
/// name the same bytes with a new URL every time; ``ignoringQueryParameters(_:)`` or
/// ``signedURLs`` drop those parameters, and any function can be supplied.
///
/// ```swift
/// let keys = MediaCacheKeyFunction.ignoringQueryParameters(["token", "Expires", "Signature"])
/// keys.key(for: "https://cdn.example/a.mp4?token=abc&quality=hd")  // "https://cdn.example/a.mp4?quality=hd"
/// ```
public struct MediaCacheKeyFunction: Sendable {
    private let transform: @Sendable (String) -> String

    /// A key function; `transform` must be deterministic across runs (keys are persisted).
    public init(_ transform: @escaping @Sendable (String) -> String) {
        self.transform = transform
    }

    /// The key for `url`.
    public func key(for url: String) -> String { transform(url) }

    /// The URL itself.
    public static let url = MediaCacheKeyFunction { $0 }

    /// The URL without the query parameters named in `names` (compared case-insensitively), the
    /// others kept in their order; the fragment is dropped.
    public static func ignoringQueryParameters(_ names: Set<String>) -> MediaCacheKeyFunction {
        let lowered = Set(names.map { $0.lowercased() })
        return MediaCacheKeyFunction { url in
            var text = url
            if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
            guard let question = text.firstIndex(of: "?") else { return text }
            let base = text[..<question]
            let kept = text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true)
                .filter { pair in
                    let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    let decoded = String(name).removingPercentEncoding ?? String(name)
                    return !lowered.contains(decoded.lowercased())
                }
            return kept.isEmpty ? String(base) : base + "?" + kept.joined(separator: "&")
        }
    }

    /// The parameters common signing schemes add (CloudFront, Akamai, S3 presigned URLs, tokens).
    public static let signingParameters: Set<String> = [
        "token", "expires", "signature", "key-pair-id", "policy", "hdnts", "hdnea", "auth", "sig", "st", "e",
        "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
        "x-amz-signature", "x-amz-security-token",
    ]

    /// Drops ``signingParameters``.
    public static let signedURLs = ignoringQueryParameters(signingParameters)
}

/// Where an entry's bytes live: a file named by a hash of its key, with the media's extension.
enum CacheFileNaming {
    /// The first 128 bits of the key's SHA-256, in hex: the entry's name stem.
    static func hash(ofKey key: String) -> String {
        String(SHA256.hash(Array(key.utf8)).hexString.prefix(32))
    }

    /// Extensions a URL may lend its file (a URL ending in `.php` or `.do` says nothing about its media).
    static let mediaExtensions: Set<String> = [
        "mp4", "m4v", "m4a", "m4s", "mov", "ts", "m2ts", "mts", "aac", "mp3", "flac", "wav", "ogg", "oga", "opus",
        "webm", "mkv", "flv", "m3u8", "m3u", "key", "vtt", "srt", "webvtt", "json", "cmfv", "cmfa", "mpd", "3gp",
    ]

    /// Media types and the extension their files get when the URL has none.
    static let extensionsByMediaType: [String: String] = [
        "video/mp4": "mp4", "audio/mp4": "m4a", "video/mp2t": "ts", "audio/mpeg": "mp3", "audio/aac": "aac",
        "application/vnd.apple.mpegurl": "m3u8", "application/x-mpegurl": "m3u8", "audio/mpegurl": "m3u8",
        "audio/x-mpegurl": "m3u8", "video/webm": "webm", "audio/webm": "webm", "video/x-flv": "flv",
        "audio/ogg": "ogg", "audio/flac": "flac", "text/vtt": "vtt", "video/quicktime": "mov",
        "video/x-matroska": "mkv", "application/json": "json",
    ]

    /// `HASH.EXT`: the URL path's extension when it is a media extension, else the media type's,
    /// else `bin`.
    static func fileName(hash: String, url: String, mimeType: String?) -> String {
        hash + "." + fileExtension(url: url, mimeType: mimeType)
    }

    static func fileExtension(url: String, mimeType: String?) -> String {
        if let path = URLComponents(string: url)?.path, let dot = path.lastIndex(of: "."),
            !path[dot...].contains("/")
        {
            let candidate = path[path.index(after: dot)...].lowercased()
            if mediaExtensions.contains(candidate) { return candidate }
        }
        if let mimeType {
            let bare = mimeType.split(separator: ";", omittingEmptySubsequences: false)[0].trimmingHTTPWhitespace()
                .lowercased()
            if let known = extensionsByMediaType[bare] { return known }
        }
        return "bin"
    }
}
