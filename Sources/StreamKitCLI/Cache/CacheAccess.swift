import Foundation
import StreamKitCore
import StreamKitHTTPClient
import StreamKitMediaCache

/// Opening the media cache of StreamKit's home for a command, with the byte cap `--cache-limit`
/// sets and the key mode `--cache-key` sets: given, each is remembered (in `cache/limit`,
/// `cache/key`) for later commands; otherwise the one remembered applies, else 1 GiB and `url`.
enum CacheAccess {
    static let defaultLimit: Int64 = 1 << 30
    /// The help of `--cache-limit` where a command opens the cache.
    static let limitHelp = "The cache's byte cap, remembered for later commands (default: 1G)."
    /// The help of `--cache-key` where a command opens the cache.
    static let keyHelp =
        "How cache entries are named, remembered for later commands: url (default), signed (without "
        + "token, Expires, Signature and the like), or ignore:NAME,NAME (without those query parameters)."

    /// The key mode to use: `option`, else the one remembered, else `url`. Entries made under
    /// another mode stay, under their old keys, until evicted.
    static func keyMode(directory: String, option: CacheKeyMode?) -> CacheKeyMode {
        if let option { return option }
        return remembered(directory + "/key").flatMap(CacheKeyMode.init(argument:)) ?? .url
    }

    /// The cap to use: `option`, else the one remembered, else 1 GiB.
    static func limit(directory: String, option: ByteSize?) -> Int64 {
        if let option { return option.bytes }
        return remembered(directory + "/limit").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil } ?? defaultLimit
    }

    private static func remembered(_ file: String) -> String? {
        (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Remembers what a command that got the cache was given, for later commands (not what one
    /// refused because another process holds the cache was given).
    /// Remembers `bytes` as the cap of the cache in `home` for later commands.
    static func rememberLimit(_ bytes: Int64, home: String) {
        remember("\(bytes)", in: StreamKitHome.cache(in: home) + "/limit")
    }

    private static func remember(_ value: String?, in file: String) {
        guard let value else { return }
        try? AtomicFile.write(Array("\(value)\n".utf8), to: file, temporarySuffix: ".tmp")
    }

    /// Opens the cache in `home`, or reports on standard error why it cannot be and throws
    /// ``ExitCode/failure``. `destinations` limits where the cache's client connects (the proxy's).
    static func open(
        home: String, limit option: ByteSize?, keys: CacheKeyMode? = nil, destinations: DestinationPolicy? = nil,
        context: CommandContext
    ) throws -> MediaCache {
        let directory = StreamKitHome.cache(in: home)
        do {
            try StreamKitHome.prepare(home)
            var configuration = MediaCacheConfiguration(
                directory: directory, byteLimit: limit(directory: directory, option: option))
            configuration.keyFunction = keyMode(directory: directory, option: keys).function
            configuration.destinationPolicy = destinations
            let cache = try MediaCache(configuration: configuration)
            remember(option.map { "\($0.bytes)" }, in: directory + "/limit")
            remember(keys.map { "\($0)" }, in: directory + "/key")
            return cache
        } catch let error as MediaCacheError where error.kind == .inUse {
            context.writeError("error: cannot open the cache \(directory): \(error.detail); stop that process first\n")
            throw ExitCode.failure
        } catch {
            context.writeError("error: cannot open the cache \(directory): \(error)\n")
            throw ExitCode.failure
        }
    }

    /// Opens the cache of StreamKit's home (`home`, else the environment's) for one change, runs
    /// `body` on it, and shuts it down, whether `body` returns or throws.
    static func using<Result: Sendable>(
        home: String?, context: CommandContext, _ body: (MediaCache) async throws -> Result
    ) async throws -> Result {
        let cache = try open(
            home: StreamKitHome.resolve(override: home, environment: context.environment), limit: nil,
            context: context)
        do {
            let result = try await body(cache)
            await cache.shutdown()
            return result
        } catch {
            await cache.shutdown()
            throw error
        }
    }
}
