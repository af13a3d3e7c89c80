import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// `streamkit download URL`: an HLS stream into a local package that plays with no network, or a
/// progressive file over HTTP(S); both resume when run again.
struct DownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download an HLS stream into a local package that plays offline, or a file; resumes when run again.",
        discussion: """
            HLS (a URL ending in .m3u8, or answered with an HLS Content-Type or a body starting with
            #EXTM3U) becomes a package folder: index.m3u8 (a multivariant playlist with relative URIs),
            package.json, and one folder per rendition with its playlist, segments, maps and keys.
            It goes to $STREAMKIT_HOME/library/ID (STREAMKIT_HOME defaults to $XDG_DATA_HOME/streamkit,
            else ~/.local/share/streamkit), where ID is 16 hex digits of SHA-256 over the URL, --variant,
            --audio, --subs and --decrypt, so the same command resumes the same package; -o DIR puts
            it in DIR. Files already in place are never fetched again (resuming an unfinished package
            checks their ETag with a HEAD each; a file changed on the server is fetched again); a
            partial file continues with If-Range. A live playlist is recorded (reloaded every target
            duration) until ENDLIST, --live-duration or Ctrl-C, and left as VOD. A segment that still
            fails after retries fails the download (exit 1, everything kept); with --skip-broken it
            becomes a gap (exit 2).
            Any other URL is downloaded as a file: partial data in FILE.streamkit-partial, its
            validator in that file's attributes. Ctrl-C stops cleanly and exits 130 (a live recording
            is finished instead and exits 0). Play a package with `streamkit serve`.
            Each download is a task of the download queue in $STREAMKIT_HOME (--home): `streamkit queue
            list` and the served page show it; the same command resumes the same task. A queue that
            another process holds (queue run) is refused with exit 1.
            """,
        examples: [
            .init(
                "Download an HLS stream (best variant, default audio, all subtitles)",
                "streamkit download https://example.com/show/master.m3u8"),
            .init(
                "French audio, no subtitles, 720p at most, 16 connections, decrypted",
                "streamkit download URL --audio fr --subs none --variant 1280x720 -j 16 --decrypt"),
            .init(
                "Record 10 minutes of a live stream into a folder", "streamkit download URL --live-duration 600 -o show"
            ),
            .init(
                "Download a file to a path at most 2 MB a second",
                "streamkit download URL -o ~/Movies/talk.mp4 --limit-rate 2M"),
            .init("Send a header and print JSON progress", "streamkit download URL -H 'Cookie: a=1' --json"),
        ],
        group: "Downloads")

    @Argument(valueName: "url", help: "The http or https URL to download.") var url: String
    @Option(
        name: "output", short: "o", valueName: "path",
        help: "HLS: the package folder. A file: the file to write, or a directory to write it into.")
    var output: String?
    @Option(valueName: "variant", help: "HLS variant: best, worst, a bandwidth cap (1500k, 2M) or WxH.")
    var variant = "best"
    @Option(
        name: "codec", valueName: "codecs",
        help: "HLS: only variants with one of these codecs (comma-separated prefixes: avc1, hvc1, av01).")
    var codecs: String?
    @Option(valueName: "audio", help: "HLS audio renditions: auto (the default one), all, none, a language, name:NAME.")
    var audio = "auto"
    @Option(valueName: "subs", help: "HLS subtitles: all, none, a language, name:NAME.") var subs = "all"
    @Option(
        name: "connections", short: "j", valueName: "n",
        help: "HLS: transfers at once (default 8). A file: range connections (default 1, one request).")
    var connections: Int?
    @Flag(help: "Store AES-128 segments decrypted and drop their keys (SAMPLE-AES stays encrypted).")
    var decrypt = false
    @Flag(help: "Mark segments that still fail after retries as gaps and go on (exit code 2).")
    var skipBroken = false
    @Option(valueName: "rate", help: "At most this many bytes a second in all, such as 500k or 2M.")
    var limitRate: TransferRate?
    @Option(name: "header", short: "H", valueName: "header", help: "An extra request header, 'Name: value'.")
    var headers: [String] = []
    @Option(valueName: "seconds", help: "Live HLS: stop after recording this many seconds of media.")
    var liveDuration: Double?
    @Option(valueName: "count", help: "HLS: refuse media playlists listing more segments than this.")
    var maxSegments = 100_000
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Option(valueName: "count", help: "Failed attempts in a row to retry (each from the byte reached).") var retries = 4
    @Flag(help: "Print progress and the result as JSON lines on standard output.") var json = false

    init() {}

    mutating func validate() throws {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: url)?.host?.isEmpty == false else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        for header in headers {
            guard Self.parseHeader(header) != nil else {
                throw ValidationError("--header must be 'Name: value', got '\(header)'")
            }
        }
        guard (0...100).contains(retries) else {
            throw ValidationError("--retries must be between 0 and 100, got \(retries)")
        }
        try Self.validateSelection(variant: variant, audio: audio, subs: subs, connections: connections)
        if let liveDuration, !(liveDuration > 0 && liveDuration <= 1e9) {
            throw ValidationError("--live-duration must be a number of seconds above 0, got \(liveDuration)")
        }
        guard maxSegments >= 1 else { throw ValidationError("--max-segments must be at least 1, got \(maxSegments)") }
    }

    func run(_ context: CommandContext) async throws {
        var requestHeaders = HTTPHeaders()
        for header in headers {
            if let (name, value) = Self.parseHeader(header) { requestHeaders.add(name, value) }
        }
        let client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                userAgent: "streamkit/\(streamKitVersion)", environment: context.environment,
                maximumConnectionsPerHost: max(connections ?? 8, 8), globalReceiveRate: limitRate?.bytesPerSecond,
                bodyBufferLimit: 256 << 10, receiveBufferSize: 256 << 10))
        let retry = HTTPClientRetryPolicy(maximumAttempts: retries + 1)
        // The download is a task of the home's queue, run here (docs/CLI.md): open the queue first,
        // so that a queue another process holds is refused before anything is fetched.
        let queue: DownloadManager
        do {
            queue = try await DownloadManager(
                configuration: DownloadManagerConfiguration(
                    directory: QueueAccess.directory(home, context), runsTasks: false,
                    userAgent: "streamkit/\(streamKitVersion)"))
        } catch {
            await client.shutdown()
            throw queueFailure(error, context)
        }
        do {
            if await SourceProbe.isHLS(url, client: client, headers: requestHeaders, retry: retry) {
                try await runHLS(context, client: client, headers: requestHeaders, retry: retry, queue: queue)
            } else {
                try await runFile(context, client: client, headers: requestHeaders, retry: retry, queue: queue)
            }
        } catch {
            await queue.close()
            throw error
        }
        await queue.close()
    }

    /// Reports a queue that cannot be used (another process holds it, or its index cannot be
    /// written) and returns the exit code: 1.
    func queueFailure(_ error: DownloadManagerError, _ context: CommandContext) -> ExitCode {
        var words = "cannot use the download queue: \(error)"
        if error.kind == .directoryLocked {
            words += "; stop that process, or let it run the download: streamkit queue add \(url) --start"
        }
        if json {
            context.write(
                JSONValue.object([
                    "event": .string("result"), "status": .string("failed"), "kind": .string(error.kind.description),
                    "error": .string(words), "url": .string(url),
                ]) + "\n")
        }
        context.writeError("error: \(words)\n")
        return ExitCode.failure
    }

    /// Takes the task of `request` in the queue (found again when the same command ran before).
    func begin(
        _ request: DownloadRequest, queue: DownloadManager, client: HTTPClient, context: CommandContext
    ) async throws -> DownloadForegroundTask {
        do {
            return try await queue.beginForeground(request)
        } catch {
            await client.shutdown()
            throw queueFailure(error, context)
        }
    }

    /// Checks the selection options `download` and `queue add` share: `--variant`, `--audio`,
    /// `--subs` and `-j`.
    static func validateSelection(variant: String, audio: String, subs: String, connections: Int?) throws {
        guard VariantPreference(variant) != nil else {
            throw ValidationError("--variant must be best, worst, a bandwidth such as 1500k, or WxH, got '\(variant)'")
        }
        guard RenditionPreference(audio) != nil else {
            throw ValidationError("--audio must be auto, all, none, a language or name:NAME, got '\(audio)'")
        }
        guard RenditionPreference(subs) != nil else {
            throw ValidationError("--subs must be all, none, a language or name:NAME, got '\(subs)'")
        }
        if let connections, !(1...64).contains(connections) {
            throw ValidationError("--connections must be between 1 and 64, got \(connections)")
        }
    }

    /// `Name: value` → (name, value); `nil` when there is no colon or the name is not a token.
    static func parseHeader(_ text: String) -> (String, String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon]
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" }),
            !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
        else { return nil }
        return (String(name), value)
    }
}
