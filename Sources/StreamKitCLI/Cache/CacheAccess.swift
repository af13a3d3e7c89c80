import Foundation
import MediaCache

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

    /// The key mode to use, remembering `option` when given.
    static func keyMode(directory: String, option: CacheKeyMode?) -> CacheKeyMode {
        let file = directory + "/key"
        if let option {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try? "\(option)\n".write(toFile: file, atomically: true, encoding: .utf8)
            return option
        }
        let text = (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.flatMap(CacheKeyMode.init(argument:)) ?? .url
    }

    /// The cap to use, remembering `option` when given.
    static func limit(directory: String, option: ByteSize?) -> Int64 {
        let file = directory + "/limit"
        if let option {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try? "\(option.bytes)\n".write(toFile: file, atomically: true, encoding: .utf8)
            return option.bytes
        }
        let text = (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil } ?? defaultLimit
    }

    /// Opens the cache in `home`, or reports on standard error why it cannot be and throws
    /// ``ExitCode/failure``.
    static func open(
        home: String, limit option: ByteSize?, keys: CacheKeyMode? = nil, context: CommandContext
    ) throws -> MediaCache {
        let directory = StreamKitHome.cache(in: home)
        do {
            var configuration = MediaCacheConfiguration(
                directory: directory, byteLimit: limit(directory: directory, option: option))
            configuration.keyFunction = keyMode(directory: directory, option: keys).function
            return try MediaCache(configuration: configuration)
        } catch let error as MediaCacheError where error.kind == .inUse {
            context.writeError("error: cannot open the cache \(directory): \(error.detail); stop that process first\n")
            throw ExitCode.failure
        } catch {
            context.writeError("error: cannot open the cache \(directory): \(error)\n")
            throw ExitCode.failure
        }
    }
}
