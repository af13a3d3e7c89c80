import StreamKitCore

/// Where StreamKit keeps its data (docs/CLI.md): `--home DIR`, else `$STREAMKIT_HOME`, else
/// `$XDG_DATA_HOME/streamkit`, else `~/.local/share/streamkit`. It holds the library
/// (downloads), the cache and the queue database.
public enum StreamKitHome {
    /// The home directory for an optional `--home` value and the environment.
    public static func resolve(override: String?, environment: [String: String]) -> String {
        if let override, !override.isEmpty { return override }
        if let home = environment["STREAMKIT_HOME"], !home.isEmpty { return home }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/streamkit" }
        return (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/") + "/.local/share/streamkit"
    }

    /// The library directory inside `home`: one folder per downloaded item.
    public static func library(in home: String) -> String { home + "/library" }

    /// The media cache's directory inside `home` (apart from the library: the cache never touches it).
    public static func cache(in home: String) -> String { home + "/cache" }
    /// The MP4 files serve's player pages offer, written on demand and kept (`PackageExport`).
    public static func exports(in home: String) -> String { home + "/exports" }

    /// Creates `home` and its library if missing, and makes the home, library and cache folders
    /// 0700 (``PrivateFiles``), so that a home an older version left readable to others is
    /// closed when a command opens it. Their contents need no walk: a 0700 folder already keeps
    /// everyone else from anything inside it.
    ///
    /// - Throws: ``SystemError`` when a folder cannot be made.
    public static func prepare(_ home: String) throws(SystemError) {
        try PrivateFiles.createDirectory(library(in: home))
        for folder in [home, library(in: home), cache(in: home)] { PrivateFiles.restrictDirectory(folder) }
    }
}
