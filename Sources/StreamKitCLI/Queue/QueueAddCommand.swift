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
            An HLS URL (.m3u8, or answered as a playlist) becomes a package; anything else a file fetched
            over -j range connections. The task waits stopped unless --start is given; the same URL and
            selection cannot be queued twice.
            """,
        examples: [
            .init(
                "Queue a stream with French audio",
                "streamkit queue add https://example.com/show/master.m3u8 --audio fr --title Show"),
            .init("Queue a file and start it", "streamkit queue add https://example.com/talk.mp4 --start"),
        ])

    @Argument(valueName: "url", help: "The http or https URL.") var url: String
    @Option(valueName: "title", help: "A title for lists (default: the URL's file name).") var title: String?
    @Option(valueName: "kind", help: "auto, hls or file.") var kind = "auto"
    @Option(valueName: "variant", help: "HLS variant: best, worst, a bandwidth cap (1500k, 2M) or WxH.") var variant =
        "best"
    @Option(valueName: "audio", help: "HLS audio renditions: auto, all, none, a language, name:NAME.") var audio =
        "auto"
    @Option(valueName: "subs", help: "HLS subtitles: all, none, a language, name:NAME.") var subs = "all"
    @Option(
        name: "connections", short: "j", valueName: "n",
        help: "Range connections (file, default 4) or transfers (HLS, default 8).")
    var connections: Int?
    @Flag(help: "Store AES-128 segments decrypted.") var decrypt = false
    @Option(valueName: "type", help: "video or audio.") var type = "video"
    @Option(valueName: "url", help: "A cover image URL.") var thumbnail: String?
    @Option(name: "header", short: "H", valueName: "header", help: "An extra request header, 'Name: value'.")
    var headers: [String] = []
    @Flag(help: "Start the task at once (queue it ready).") var start = false
    @Option(valueName: "dir", help: StreamKitHome.optionHelp) var home: String?
    @Flag(help: "Print the task as a JSON line.") var json = false

    init() {}

    mutating func validate() throws {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: url)?.host?.isEmpty == false else {
            throw ValidationError("<url> must be an http or https URL, got '\(url)'")
        }
        guard ["auto", "hls", "file"].contains(kind) else {
            throw ValidationError("--kind must be auto, hls or file, got '\(kind)'")
        }
        guard DownloadFileType(rawValue: type) != nil else {
            throw ValidationError("--type must be video or audio, got '\(type)'")
        }
        try DownloadCommand.validateSelection(variant: variant, audio: audio, subs: subs, connections: connections)
        for header in headers where DownloadCommand.parseHeader(header) == nil {
            throw ValidationError("--header must be 'Name: value', got '\(header)'")
        }
    }

    func run(_ context: CommandContext) async throws {
        var requestHeaders = HTTPHeaders()
        for header in headers {
            if let (name, value) = DownloadCommand.parseHeader(header) { requestHeaders.add(name, value) }
        }
        var resolvedKind = DownloadKind(rawValue: kind)
        if resolvedKind == nil {
            let client = try HTTPClient(configuration: HTTPClientConfiguration(environment: context.environment))
            resolvedKind =
                await SourceProbe.isHLS(url, client: client, headers: requestHeaders, retry: .default) ? .hls : .file
            await client.shutdown()
        }
        let request = DownloadRequest(
            url: url, kind: resolvedKind ?? .file,
            selection: HLSSelection(
                variant: VariantPreference(variant) ?? .best, audio: RenditionPreference(audio) ?? .automatic,
                subtitles: RenditionPreference(subs) ?? .all),
            decrypt: decrypt, fileType: DownloadFileType(rawValue: type) ?? .video, title: title,
            thumbnailURL: thumbnail, connections: connections, headers: requestHeaders)
        let answer = try await QueueAccess.perform(.add(request, autoStart: start), home: home, context: context)
        if let error = answer.error {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        for task in answer.tasks { context.write(json ? QueueAccess.jsonLine(task) : task.id + "\n") }
    }
}
