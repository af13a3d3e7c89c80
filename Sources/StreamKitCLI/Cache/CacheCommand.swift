import Foundation
import StreamKitCore
import StreamKitMediaCache

/// `streamkit cache`: inspect, fill and empty the media cache.
public struct CacheCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "List, preload, pin, remove or clear what the media cache holds.",
        discussion: """
            The cache ($STREAMKIT_HOME/cache) keeps the bytes that played through `streamkit play` and the \
            proxy of `streamkit serve`, so that they play again without the network. It is apart from the \
            library: downloads are never in it.
            """,
        examples: [
            .init("List the cache", "streamkit cache list"),
            .init("Forget one URL", "streamkit cache rm https://example.com/talk.mp4"),
            .init("Empty the cache", "streamkit cache clear"),
        ],
        subcommands: [
            CacheListCommand.self, CachePreloadCommand.self, CachePinCommand.self, CacheUnpinCommand.self,
            CacheRemoveCommand.self, CacheClearCommand.self,
        ],
        group: "Playback")

    public init() {}
}

/// `streamkit cache list [--limit N | --all] [--json]`.
public struct CacheListCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the cache's entries, most recently used first.",
        discussion: """
            Each entry shows the bytes cached, the length, the share cached, whether it is pinned, when it \
            was last used, and its URL; the most recently used 100 by default, then the number and bytes \
            of all entries. Works while another streamkit process uses the cache (bytes that process has \
            not yet recorded are not counted).
            """,
        examples: [
            .init("List the entries", "streamkit cache list"),
            .init("As JSON lines", "streamkit cache list --json"),
            .init("Every entry", "streamkit cache list --all"),
        ])

    /// Entries listed when neither `--limit` nor `--all` is given.
    static let defaultLimit = 100

    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print one JSON object per entry, then a summary object.")
    @Option(valueName: "count", help: "List the most recently used COUNT entries (default 100).") var limit: Int?
    @Flag(help: "List every entry.") var all = false

    public init() {}

    public mutating func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1, got \(limit)") }
        if all && limit != nil { throw ValidationError("give --limit or --all, not both") }
    }

    public func run(_ context: CommandContext) async throws {
        let home = home.path(context)
        let directory = StreamKitHome.cache(in: home)
        let listing: MediaCacheListing
        do {
            listing = try MediaCache.listing(inDirectory: directory, limit: all ? nil : limit ?? Self.defaultLimit)
        } catch {
            context.writeError("error: cannot read the cache \(directory): \(error)\n")
            throw ExitCode.failure
        }
        let limit = CacheAccess.limit(directory: directory, option: nil)
        let entries = listing.entries
        let cached = listing.cachedBytes
        if format.json {
            for entry in entries {
                var fields: [String: JSONValue] = [
                    "event": .string("entry"), "url": .string(entry.url), "key": .string(entry.key),
                    "cachedBytes": .number(Double(entry.cachedBytes)), "cachedPercent": .number(entry.cachedPercent),
                    "pinned": .bool(entry.isPinned), "pinnedBy": .string(entry.pinnedBy.joined(separator: ",")),
                    "lastAccess": .number(entry.lastAccess), "complete": .bool(entry.isComplete),
                ]
                if let length = entry.length { fields["length"] = .number(Double(length)) }
                if let type = entry.mimeType { fields["mimeType"] = .string(type) }
                if let file = entry.fileName { fields["file"] = .string(directory + "/data/" + file) }
                context.write(JSONValue.object(fields) + "\n")
            }
            var result: [String: JSONValue] = [
                "event": .string("result"), "entries": .number(Double(listing.entryCount)),
                "cachedBytes": .number(Double(cached)), "limit": .number(Double(limit)),
                "directory": .string(directory),
            ]
            // Only when some were left out, so that a full listing reads as it always has.
            if entries.count < listing.entryCount { result["listed"] = .number(Double(entries.count)) }
            context.write(JSONValue.object(result) + "\n")
            return
        }
        guard !entries.isEmpty else {
            context.write("The cache is empty (\(directory)).\n")
            return
        }
        context.write(
            Self.pad("CACHED", 10) + Self.pad("SIZE", 10) + Self.pad("%", 8) + Self.pad("PINNED", 8)
                + Self.pad("LAST USED", 18) + "URL\n")
        for entry in entries {
            let size = entry.length.map { ByteCountText.format(Double($0)) } ?? "?"
            let percent = ByteCountText.fixed(entry.cachedPercent, digits: 1) + "%"
            context.write(
                Self.pad(ByteCountText.format(Double(entry.cachedBytes)), 10) + Self.pad(size, 10)
                    + Self.pad(percent, 8)
                    + Self.pad(entry.isPinned ? "yes" : "no", 8) + Self.pad(Self.date(entry.lastAccess), 18) + entry.url
                    + "\n")
        }
        let count = listing.entryCount
        if count > entries.count {
            context.write("… and \(count - entries.count) more, less recently used (--all lists every entry).\n")
        }
        context.write(
            "\(count) entr\(count == 1 ? "y" : "ies"), \(ByteCountText.format(Double(cached))) cached "
                + "(limit \(ByteCountText.format(Double(limit))), \(directory)).\n")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    /// `2026-11-29 17:05` in UTC, without a locale-dependent formatter (nor Foundation's calendar
    /// and `String(format:)`, a third of listing a hundred thousand entries).
    static func date(_ seconds: Double) -> String {
        let whole = Int64(saturating: seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let time = whole - days * 86_400
        let (year, month, day) = CivilCalendar.date(days: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(time / 3600)):\(two(time / 60 % 60))"
    }
}

/// `streamkit cache rm URL`.
public struct CacheRemoveCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove one URL's entry from the cache, with its file.",
        examples: [.init("Forget a file", "streamkit cache rm https://example.com/talk.mp4")])

    @Argument(valueName: "url", help: "The URL whose cached bytes to remove.")
    var url: String
    @OptionGroup var home: HomeOptions

    public init() {}

    public func run(_ context: CommandContext) async throws {
        let url = url
        let removed = try await CacheAccess.using(home: home.directory, context: context) { await $0.remove(url) }
        guard removed else {
            context.writeError("error: \(url) is not in the cache\n")
            throw ExitCode.failure
        }
        context.write("Removed \(url) from the cache.\n")
    }
}

/// `streamkit cache clear`.
public struct CacheClearCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every entry from the cache, pinned ones included.",
        examples: [.init("Empty the cache", "streamkit cache clear")])

    @OptionGroup var home: HomeOptions

    public init() {}

    public func run(_ context: CommandContext) async throws {
        let (count, bytes) = try await CacheAccess.using(home: home.directory, context: context) { cache in
            let bytes = cache.usage.total
            return (await cache.removeAll(), bytes)
        }
        context.write(
            "Removed \(count) entr\(count == 1 ? "y" : "ies") (\(ByteCountText.format(Double(bytes)))) from the cache.\n"
        )
    }
}

/// `streamkit cache preload URL [--bytes SIZE | --seconds N]`.
public struct CachePreloadCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "preload",
        abstract: "Cache the start of a URL ahead of playback.",
        discussion: """
            For a file, caches its first --bytes (all of it by default). For an HLS playlist (.m3u8, or \
            with --seconds), caches the playlists and the first --seconds (10 by default) of the first \
            variant with its default audio and subtitles. Ctrl-C stops with what was cached kept (exit 130).
            """,
        examples: [
            .init(
                "Cache the first 20 MB of a file", "streamkit cache preload https://example.com/talk.mp4 --bytes 20M"),
            .init(
                "Cache the first minute of a stream",
                "streamkit cache preload https://example.com/live/index.m3u8 --seconds 60"),
        ])

    @Argument(valueName: "url", help: "The http or https URL of a file, an HLS playlist or a DASH MPD.")
    var url: String
    @Option(valueName: "size", help: "How much of a file to cache, such as 20M (default: all of it).")
    var bytes: ByteSize?
    @Option(valueName: "seconds", help: "How much of an HLS or DASH stream to cache (default: 10).")
    var seconds: Double?
    @OptionGroup var home: HomeOptions
    @Option(name: "cache-limit", valueName: "size", help: CacheAccess.limitHelp) var cacheLimit: ByteSize?
    @Option(name: "cache-key", valueName: "mode", help: CacheAccess.keyHelp) var cacheKey: CacheKeyMode?

    public init() {}

    public mutating func validate() throws {
        try URLCredentialCheck.refuseForCache(url)
        guard MediaCache.isFetchable(url) else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        if bytes != nil && seconds != nil { throw ValidationError("--bytes and --seconds cannot be used together") }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive, got \(seconds)") }
    }

    public func run(_ context: CommandContext) async throws {
        let home = home.path(context)
        let cache = try CacheAccess.open(home: home, limit: cacheLimit, keys: cacheKey, context: context)
        let url = url
        let isPlaylist =
            seconds != nil || ProxyPaths.looksLikePlaylist(url)
            || (URLComponents(string: url)?.path.lowercased().hasSuffix(".mpd") ?? false)
        let seconds = seconds ?? 10
        let byteCount = bytes?.bytes
        do {
            let text = try await InterruptHandler.run {
                if isPlaylist {
                    let summary = try await cache.preloadHLS(url, seconds: seconds)
                    return "Cached \(summary.segments) segments (\(ByteCountText.fixed(summary.seconds, digits: 1)) s, "
                        + "\(ByteCountText.format(Double(summary.bytes)))) and \(summary.playlists) playlists of \(url).\n"
                }
                let cached = try await cache.preload(url, byteCount: byteCount)
                return "Cached \(ByteCountText.format(Double(cached))) of \(url).\n"
            }
            await cache.shutdown()
            context.write(text)
        } catch is CancellationError {
            await cache.shutdown()
            context.writeError("Interrupted; what was cached is kept.\n")
            throw ExitCode.interrupted
        } catch {
            await cache.shutdown()
            context.writeError("error: preloading \(url) failed: \(error)\n")
            throw ExitCode.failure
        }
    }
}

/// Which proxy route a URL plays through.
enum ProxyPaths {
    /// Whether the URL's path ends in `.m3u8` or `.m3u`.
    static func looksLikePlaylist(_ url: String) -> Bool {
        let path = URLComponents(string: url)?.path.lowercased() ?? ""
        return path.hasSuffix(".m3u8") || path.hasSuffix(".m3u")
    }
}
