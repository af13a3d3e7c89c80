import Foundation
import StreamKitMediaCache

/// `streamkit cache pin URL` / `cache unpin URL`: keep one URL's cached bytes from eviction.
public struct CachePinCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Keep one URL's cached bytes: never evicted, and outside the cap (until unpinned).",
        discussion: """
            A URL not cached yet is pinned too: whatever of it is cached later is kept. `cache clear` \
            and `cache rm` still remove pinned entries.
            """,
        examples: [.init("Keep a file", "streamkit cache pin https://example.com/talk.mp4")])

    @Argument(valueName: "url", help: "The http or https URL to keep.")
    var url: String
    @OptionGroup var home: HomeOptions

    public init() {}

    public mutating func validate() throws {
        try URLCredentialCheck.refuseForCache(url)
        guard MediaCache.isFetchable(url) else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
    }

    public func run(_ context: CommandContext) async throws {
        let url = url
        do {
            try await CacheAccess.using(home: home.directory, context: context) { try $0.pin(url) }
        } catch let error as MediaCacheError {
            context.writeError("error: cannot pin \(url): \(error)\n")
            throw ExitCode.failure
        }
        context.write("Pinned \(url): it is never evicted.\n")
    }
}

/// `streamkit cache unpin URL`.
public struct CacheUnpinCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "unpin",
        abstract: "Let one pinned URL's cached bytes be evicted again.",
        examples: [.init("Let a file go", "streamkit cache unpin https://example.com/talk.mp4")])

    @Argument(valueName: "url", help: "The pinned URL.")
    var url: String
    @OptionGroup var home: HomeOptions

    public init() {}

    public func run(_ context: CommandContext) async throws {
        let url = url
        let unpinned = try await CacheAccess.using(home: home.directory, context: context) { $0.unpin(url) }
        guard unpinned else {
            context.writeError("error: \(url) is not pinned\n")
            throw ExitCode.failure
        }
        context.write("Unpinned \(url).\n")
    }
}
