import Foundation
import StreamKitHTTP

extension MediaCache {
    /// Whether the cache would fetch `url`: an http or https URL with a host, no backslash before its query.
    public static func isFetchable(_ url: String) -> Bool { unfetchableReason(url) == nil }

    /// Why the cache would not fetch `url`, or `nil` when it would.
    public static func unfetchableReason(_ url: String) -> String? {
        do {
            try checkURL(url)
            return nil
        } catch let error as MediaCacheError {
            return error.detail
        } catch {
            return "\(error)"
        }
    }

    /// Refuses what the cache does not fetch: other schemes than http and https, no host, and
    /// credentials in the URL (the index records the URL: a password would be stored in clear).
    static func checkURL(_ url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw MediaCacheError(.unsupportedURL, subject: url, detail: "only http and https URLs are cached")
        }
        guard !URLUserInfo.isPresent(in: url) else {
            throw MediaCacheError(.unsupportedURL, subject: url, detail: URLUserInfo.refusal)
        }
        // Browsers read a backslash before the query as a slash (the WHATWG URL standard), libcurl does
        // not: `http://a\@b/` is host a to the page that wrote it and host b to us. Refused, not guessed.
        if url.prefix(while: { $0 != "?" && $0 != "#" }).contains("\\") {
            throw MediaCacheError(
                .unsupportedURL, subject: url,
                detail: "a backslash before the query is read as / by browsers and not by HTTP clients")
        }
    }
}
