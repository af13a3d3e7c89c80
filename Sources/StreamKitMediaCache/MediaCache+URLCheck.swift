import Foundation
import StreamKitHTTP

extension MediaCache {
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
    }
}
