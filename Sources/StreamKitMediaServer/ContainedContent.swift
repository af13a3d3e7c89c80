import Foundation
import StreamKitHTTP
import StreamKitHTTPServer

/// What the library and the proxy send is content, never a page of this server's origin. A
/// downloaded or proxied HTML document with scripts would otherwise run at
/// `http://127.0.0.1:PORT`, where it could read the proxy, the queue and the library as a
/// same-origin page, and send what it read anywhere.
///
/// Every response gets:
/// - `Content-Security-Policy: sandbox; default-src 'none'`: a document runs no script, loads
///   nothing and has an origin of its own (opened directly or in another site's frame);
/// - `X-Content-Type-Options: nosniff`: no browser guesses a page out of data;
/// - `Cross-Origin-Resource-Policy: same-origin`: other sites' pages cannot embed it
///   (`<img>`, `<video>`, `<script>`) and read it through side channels.
///
/// A successful response whose type is not one a player reads (media, playlists, keys,
/// subtitles, images) is sent as `application/octet-stream` with
/// `Content-Disposition: attachment`, so that a browser saves it rather than shows it.
enum ContainedContent {
    /// `response` with the containment headers.
    static func contained(_ response: HTTPServerResponse) -> HTTPServerResponse {
        var response = response
        response.headers.replaceOrAdd("Content-Security-Policy", "sandbox; default-src 'none'")
        response.headers.replaceOrAdd("X-Content-Type-Options", "nosniff")
        response.headers.replaceOrAdd("Cross-Origin-Resource-Policy", "same-origin")
        if (200..<300).contains(response.status.rawValue), let type = response.headers["Content-Type"],
            !isPlayerContent(type)
        {
            response.headers.replaceOrAdd("Content-Type", "application/octet-stream")
            response.headers.replaceOrAdd("Content-Disposition", "attachment")
        }
        return response
    }

    /// Whether a media type (parameters allowed) is one players read: audio and video, HLS and
    /// DASH playlists, keys (sent as octet-stream), subtitles and images other than SVG (a
    /// document that can carry script).
    static func isPlayerContent(_ type: String) -> Bool {
        let essence = type.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        let slash = essence.firstIndex(of: "/") ?? essence.endIndex
        switch essence[..<slash] {
        case "audio", "video": return true
        case "image": return essence != "image/svg+xml"
        default: return playerTypes.contains(essence)
        }
    }

    private static let playerTypes: Set<String> = [
        "application/vnd.apple.mpegurl", "application/x-mpegurl", "application/dash+xml", "application/mp4",
        "application/octet-stream", "binary/octet-stream", "application/pkcs8",
        "text/vtt", "application/ttml+xml", "application/x-subrip", "text/srt",
    ]
}
