import StreamKitHTTP

/// Refuses a `user:password@` URL argument before anything is written (docs/CLI.md, "Home"): the
/// queue database and the cache index record URLs, and must not hold a password.
enum URLCredentialCheck {
    /// For commands with `--header`.
    static func refuse(_ url: String) throws {
        guard URLUserInfo.isPresent(in: url) else { return }
        throw ValidationError(
            "<url>: \(URLUserInfo.refusal); send them as a header: --header 'Authorization: Basic BASE64(user:password)'"
        )
    }

    /// For commands that fetch through the cache, which sends no headers of the user's.
    static func refuseForCache(_ url: String) throws {
        guard URLUserInfo.isPresent(in: url) else { return }
        throw ValidationError(
            "<url>: \(URLUserInfo.refusal); download it instead: "
                + "streamkit download URL --header 'Authorization: Basic BASE64(user:password)'")
    }
}
