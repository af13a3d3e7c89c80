import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// `streamkit download URL`: an HLS or DASH stream into a local package that plays with no
/// network, or a progressive file over HTTP(S); both resume when run again.
struct DownloadCommand: ParsableCommand {
    /// Without `-j`, an HLS download starts with 8 transfers and ramps up to this many while each
    /// step fetches more. With the connection that fetched the playlists (libcurl's, beside the
    /// plain-http transfers' own), that is at most 16 connections to one host.
    static let mostDefaultTransfers = 15

    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract:
            "Download an HLS or DASH stream into a local package that plays offline, or a file; resumes when run again.",
        discussion: """
            HLS (a URL ending in .m3u8, or answered with an HLS Content-Type or a body starting with \
            #EXTM3U) becomes a package folder: index.m3u8 (a multivariant playlist with relative URIs), \
            package.json, and one folder per rendition with its playlist, segments, maps and keys. \
            It goes to $STREAMKIT_HOME/library/ID (STREAMKIT_HOME defaults to $XDG_DATA_HOME/streamkit, \
            else ~/.local/share/streamkit), where ID is 16 hex digits of SHA-256 over the URL, --variant, \
            --audio, --subs, --section, --exclude-segments and --decrypt, so the same command resumes \
            the same package; -o DIR puts it in DIR. The package plays through `streamkit serve` from its \
            first segments on, while it downloads: until it completes, its playlists are EVENT \
            playlists of the segments in place from the first (players that start such a playlist at \
            its end, as ffplay and mpv do, start at the beginning with -live_start_index 0). With \
            --subs-format, each WebVTT subtitle rendition is also merged into one file next to its \
            folder once the package is complete (subtitles-eng.vtt or .srt), its times counted from \
            the start of the media (X-TIMESTAMP-MAP honoured); the playlists stay as they are. Files \
            already in place are never fetched again (resuming an unfinished package \
            checks their ETag with a HEAD each; a file changed on the server is fetched again); a \
            partial file continues with If-Range. A live playlist is recorded (reloaded every target \
            duration) until ENDLIST, --live-duration or Ctrl-C, and left as VOD. A segment that still \
            fails after retries fails the download (exit 1, everything kept); with --skip-broken it \
            becomes a gap (exit 2): left out of the package's playlist, with EXT-X-DISCONTINUITY on the \
            segment after it, so that every player plays on (--gap-tags writes EXT-X-GAP instead, which \
            some players stop at). package.json records the gap: running the same command again \
            fetches it and writes the playlist whole. A playlist that breaks RFC 8216bis in ways \
            players read past is downloaded, its problems printed once as warnings with their line \
            numbers; --strict refuses it.
            DASH (a URL ending in .mpd, or answered with application/dash+xml or an MPD body) is \
            downloaded the same way, with the same options: --variant chooses a video Representation, \
            --audio and --subs AdaptationSets (by language, en,fr, name:LABEL or role:ROLE); the package \
            holds manifest.mpd (DASH, relative to the package) beside index.m3u8 over the same files. \
            Representations under DRM (ContentProtection) are refused unless --keep-encrypted.
            Any other URL is downloaded as a file: partial data in FILE.streamkit-partial, its \
            validator in that file's attributes. Ctrl-C stops cleanly and exits 130 (a live recording \
            is finished instead and exits 0). Play a package with `streamkit serve`.
            Each download is a task of the download queue in $STREAMKIT_HOME (--home): `streamkit queue \
            list` and the served page show it; the same command resumes the same task. A queue that \
            another process holds (queue run) is refused with exit 1.
            """,
        examples: [
            .init(
                "Download an HLS stream (best variant, default audio, all subtitles)",
                "streamkit download https://example.com/show/master.m3u8"),
            .init(
                "A DASH stream: the worst video, with English and French audio",
                "streamkit download https://example.com/show/manifest.mpd --variant worst --audio eng,fra"),
            .init(
                "French audio, no subtitles, 720p at most, 16 connections, decrypted",
                "streamkit download URL --audio fr --subs none --variant 1280x720 -j 16 --decrypt"),
            .init(
                "Only 0:04 to 0:10 and 2:00 to the end, without the ad segments",
                "streamkit download URL --section 0:04-0:10 --section 2:00- --exclude-segments '/ads?/'"),
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
    @OptionGroup var selection = SelectionOptions(
        audioHelp:
            "Audio (HLS renditions, DASH sets): auto (the default one), all, none, a language, en,fr, name:NAME, role:ROLE.",
        connectionsHelp:
            "HLS: transfers at once (default: 8, up to 15 while more fetch more). A file: range connections "
            + "(default 1, one request).",
        offersCodecFilter: true)
    @OptionGroup var segmentFilter: SegmentFilterOptions
    @Option(
        name: "subs-format", valueName: "format",
        help: "HLS: also merge each WebVTT subtitle rendition into one file, vtt or srt, beside its folder.")
    var subsFormat: SubtitleFormat?
    @Flag(help: "Store AES-128 and SAMPLE-AES (MPEG-TS) segments decrypted and drop their keys.")
    var decrypt = false
    @OptionGroup var keys: KeyOptions
    @Flag(help: "DASH: download Representations under DRM (ContentProtection) as they are, still encrypted.")
    var keepEncrypted = false
    @Flag(help: "Mark segments that still fail after retries as gaps and go on (exit code 2).")
    var skipBroken = false
    @Flag(help: "Write missing segments as EXT-X-GAP instead of leaving them out (some players stop at it).")
    var gapTags = false
    @Flag(help: "HLS: refuse playlists with any violation of RFC 8216bis (otherwise they are warnings).")
    var strict = false
    @Option(valueName: "rate", help: "At most this many bytes a second in all, such as 500k or 2M.")
    var limitRate: TransferRate?
    @OptionGroup var headers: HeaderOptions
    @Option(valueName: "seconds", help: "Live HLS: stop after recording this many seconds of media.")
    var liveDuration: Double?
    @Option(valueName: "count", help: "HLS: refuse media playlists listing more segments than this.")
    var maxSegments = 100_000
    @OptionGroup var home: HomeOptions
    @OptionGroup var retries: RetryOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print progress and the result as JSON lines on standard output.")

    init() {}

    mutating func validate() throws {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: url)?.host?.isEmpty == false else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        try URLCredentialCheck.refuse(url)
        if let liveDuration, !(liveDuration > 0 && liveDuration <= 1e9) {
            throw ValidationError("--live-duration must be a number of seconds above 0, got \(liveDuration)")
        }
        guard maxSegments >= 1 else { throw ValidationError("--max-segments must be at least 1, got \(maxSegments)") }
    }

    func run(_ context: CommandContext) async throws {
        let requestHeaders = headers.httpHeaders
        let client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                userAgent: "streamkit/\(streamKitVersion)", environment: context.environment,
                maximumConnectionsPerHost: max(selection.connections ?? Self.mostDefaultTransfers + 1, 8),
                globalReceiveRate: limitRate?.bytesPerSecond,
                bodyBufferLimit: 256 << 10, receiveBufferSize: 256 << 10))
        let retry = retries.policy
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
            let kind = await SourceProbe.kind(of: url, client: client, headers: requestHeaders, retry: retry)
            if kind.isPackage {
                try await runHLS(
                    context, kind: kind, client: client, headers: requestHeaders, retry: retry, queue: queue)
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
        if format.json {
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
}
