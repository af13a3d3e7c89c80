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
}
