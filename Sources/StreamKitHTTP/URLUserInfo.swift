/// Credentials written into a URL (`http://user:password@host/`), which StreamKit refuses:
/// whatever fetches a URL records it (the queue database, the cache index), so a password in it
/// would be stored in clear. Credentials go in an `Authorization` header instead.
package enum URLUserInfo {
    /// Whether `url`'s authority holds a user name or password: an `@` between the slashes after
    /// the scheme and the end of the authority (`/`, `?`, `#`, or `\`, which the WHATWG URL
    /// standard reads as `/` in http).
    package static func isPresent(in url: String) -> Bool {
        guard let colon = url.firstIndex(of: ":") else { return false }
        // As the WHATWG URL standard reads http(s): any run of `/` and `\` starts the authority.
        let authority = url[url.index(after: colon)...].drop { $0 == "/" || $0 == "\\" }
            .prefix { !"/?#\\".contains($0) }
        return authority.contains("@")
    }

    /// Why such a URL is refused; callers add what to do instead.
    package static let refusal =
        "credentials in the URL (user:password@) are refused: StreamKit would store them in clear"
}
