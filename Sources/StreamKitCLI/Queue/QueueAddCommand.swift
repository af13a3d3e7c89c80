import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// `streamkit queue add URL [--title T] [download options]`.
struct QueueAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a task to the queue; prints its id.",
        discussion: """
            An HLS or DASH URL (.m3u8 or .mpd, or answered as a playlist or MPD) becomes a package; anything else a file fetched \
            over -j range connections. The task waits stopped unless --start is given or the queue's \
            autostart is on (`queue config --autostart on`); the same URL and selection cannot be queued twice.

            An rtmp:// or rtmps:// URL becomes a recording of --duration (required) into an FLV file in \
            the task's folder, with --hls also a live HLS package that `streamkit serve` plays while it \
            records. A run that stops early (the stream ends, no media for --idle-timeout, a lost \
            connection, `queue run` killed) is followed by another that appends to the file, until it \
            holds the duration. Every add of a stream is a recording of its own.
            """,
        examples: [
            .init(
                "Queue a stream with French audio",
                "streamkit queue add https://example.com/show/master.m3u8 --audio fr --title Show"),
            .init("Queue a file and start it", "streamkit queue add https://example.com/talk.mp4 --start"),
            .init(
                "Record an hour of a live stream, playable while it records",
                "streamkit queue add rtmp://example.com/live/show --duration 1h --hls --start"),
        ])

    @Argument(valueName: "url", help: "The http, https, rtmp or rtmps URL.") var url: String
    @Option(valueName: "title", help: "A title for lists (default: the URL's file name).") var title: String?
    @Option(valueName: "kind", help: "auto, hls, dash or file.") var kind = Kind.auto
    @OptionGroup var selection = SelectionOptions(
        audioHelp: "Audio (HLS renditions, DASH sets): auto, all, none, a language, en,fr, name:NAME, role:ROLE.",
        connectionsHelp: "Range connections (file, default 4) or transfers (HLS, default 8).",
        offersCodecFilter: false)
    @OptionGroup var segmentFilter: SegmentFilterOptions
    @Option(
        name: "subs-format", valueName: "format",
        help: "HLS: once downloaded, also merge each WebVTT subtitle rendition into one file, vtt or srt.")
    var subsFormat: SubtitleFormat?
    @Flag(help: "Store AES-128 and SAMPLE-AES (MPEG-TS) segments decrypted.") var decrypt = false
    @Flag(help: "DASH: download Representations under DRM (ContentProtection) as they are, still encrypted.")
    var keepEncrypted = false
    @OptionGroup var keys: KeyOptions
    @Option(valueName: "type", help: "video or audio.") var type = DownloadFileType.video
    @Option(valueName: "url", help: "A cover image URL.") var thumbnail: String?
    @OptionGroup var headers: HeaderOptions
    @Option(
        valueName: "file",
        help:
            "HLS: once downloaded, also write the main rendition as this one .ts or .mp4 file (the segments' own "
            + "container).")
    var export: String?
    @Option(valueName: "length", help: "RTMP: the media time to record in all: 90s, 45m, 1h30m or 1:30:00.")
    var duration: RecordingLength?
    @Flag(help: "RTMP: also write a live HLS package, served by `streamkit serve` while it records.")
    var hls = false
    @Option(valueName: "seconds", help: "RTMP: a run ends when no media arrives for this long (default 10).")
    var idleTimeout: Double?
    @Flag(help: "Start the task at once (queue it ready).") var start = false
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the task as a JSON line.")

    /// `--kind`: what the URL is, or `auto` to ask the server.
    enum Kind: String, CaseIterable, ExpressibleByArgument {
        case auto, hls, dash, file

        static func invalidValueMessage(_ argument: String, for name: String) -> String {
            "\(name) must be auto, hls, dash or file, got '\(argument)'"
        }
    }

    init() {}

    /// Whether the URL is a live stream to record.
    var isRecording: Bool {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        return scheme == "rtmp" || scheme == "rtmps"
    }

    mutating func validate() throws {
        if isRecording {
            try validateRecording()
            return
        }
        guard duration == nil && !hls && idleTimeout == nil else {
            throw ValidationError("--duration, --hls and --idle-timeout are for rtmp:// recordings, not '\(url)'")
        }
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: url)?.host?.isEmpty == false else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        try URLCredentialCheck.refuse(url)
        if let export {
            let lower = export.lowercased()
            guard lower.hasSuffix(".ts") || lower.hasSuffix(".mp4") else {
                throw ValidationError("--export must name a .ts or .mp4 file, got '\(export)'")
            }
            guard kind != .file else { throw ValidationError("--export is for HLS and DASH tasks, not --kind file") }
        }
        if subsFormat != nil, kind == .file {
            throw ValidationError("--subs-format is for HLS and DASH tasks, not --kind file")
        }
        if keepEncrypted, kind == .file || kind == .hls {
            throw ValidationError("--keep-encrypted is for DASH tasks, not --kind \(kind.rawValue)")
        }
    }

    /// A recording needs a host, an end, and none of the options of downloads.
    private func validateRecording() throws {
        guard URLComponents(string: url)?.host?.isEmpty == false else {
            throw ValidationError("<url> must name a host, got '\(url)'")
        }
        try URLCredentialCheck.refuse(url)
        guard duration != nil else {
            throw ValidationError(
                "an rtmp URL is recorded and a queued recording must end: give --duration, such as 1h")
        }
        if let idleTimeout, !(idleTimeout > 0) {
            throw ValidationError("--idle-timeout must be positive, got \(idleTimeout)")
        }
        guard kind == .auto, export == nil, !decrypt, subsFormat == nil, !keepEncrypted else {
            throw ValidationError(
                "--kind, --export, --decrypt, --keep-encrypted and --subs-format are for http(s) downloads, "
                    + "not recordings")
        }
    }

    func run(_ context: CommandContext) async throws {
        let requestHeaders = headers.httpHeaders
        var resolvedKind = isRecording ? .rtmp : DownloadKind(rawValue: kind.rawValue)
        if resolvedKind == nil {
            let client = try HTTPClient(configuration: HTTPClientConfiguration(environment: context.environment))
            resolvedKind = await SourceProbe.kind(of: url, client: client, headers: requestHeaders, retry: .default)
            await client.shutdown()
        }
        var request = DownloadRequest(
            url: url, kind: resolvedKind ?? .file,
            selection: segmentFilter.applied(to: selection.hlsSelection), decrypt: decrypt, fileType: type,
            title: title,
            thumbnailURL: thumbnail, connections: selection.connections, headers: requestHeaders,
            exportPath: export.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        request.subtitleFormat = subsFormat
        request.keepEncrypted = keepEncrypted
        // Kept only in the task's secrets file, like credential headers.
        request.userKeys = try keys.userKeys()
        if let duration, isRecording {
            request.recording = LiveRecordingSettings(
                duration: duration.seconds, idleTimeout: idleTimeout ?? 10, hls: hls)
        }
        let answer = try await QueueAccess.perform(
            .add(request, autoStart: start ? true : nil), home: home, context: context)
        if let error = answer.error {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        for task in answer.tasks { context.write(format.json ? QueueAccess.jsonLine(task) : task.id + "\n") }
    }
}
