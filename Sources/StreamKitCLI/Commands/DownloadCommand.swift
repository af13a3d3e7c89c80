import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

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
    private func queueFailure(_ error: DownloadManagerError, _ context: CommandContext) -> ExitCode {
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
    private func begin(
        _ request: DownloadRequest, queue: DownloadManager, client: HTTPClient, context: CommandContext
    ) async throws -> DownloadForegroundTask {
        do {
            return try await queue.beginForeground(request)
        } catch {
            await client.shutdown()
            throw queueFailure(error, context)
        }
    }

    private func runFile(
        _ context: CommandContext, client: HTTPClient, headers: HTTPHeaders, retry: HTTPClientRetryPolicy,
        queue: DownloadManager
    ) async throws {
        let destination = try resolveDestination(context)
        let task = try await begin(
            DownloadRequest(
                url: url, kind: .file, title: destination.lastPathComponent, connections: connections ?? 1,
                headers: headers, location: destination.standardizedFileURL.path),
            queue: queue, client: client, context: context)
        let reporter = DownloadReporter(
            context: context, json: json, url: url, destination: destination, task: task)
        if let connections, connections > 1 {
            // N connections each buffer a body: smaller buffers keep the peak RSS under 40 MB at -j 8.
            await client.shutdown()
            let ranged = try HTTPClient(
                configuration: HTTPClientConfiguration(
                    userAgent: "streamkit/\(streamKitVersion)", environment: context.environment,
                    maximumConnectionsPerHost: max(connections, 8), globalReceiveRate: limitRate?.bytesPerSecond,
                    bodyBufferLimit: 128 << 10, receiveBufferSize: 128 << 10))
            try await runRanged(
                destination: destination, reporter: reporter, client: ranged, headers: headers, task: task)
            return
        }
        let request = HTTPClientRequest(url: url, headers: headers)
        let download = client.download(request, to: destination, options: HTTPFileDownloadOptions(retry: retry))
        let monitor = InterruptMonitor { download.cancel() }
        let started = ContinuousClock.now
        let progress = Task {
            for await value in download.progress { reporter.progress(value) }
        }
        defer { monitor.stop() }
        do {
            let result = try await download.result()
            await progress.value
            await client.shutdown()
            await task.finish(.succeeded(bytes: result.byteCount))
            reporter.completed(result, elapsed: started.duration(to: .now))
        } catch let error as HTTPClientError {
            await progress.value
            await client.shutdown()
            if monitor.wasInterrupted || error.kind == .cancelled {
                await task.finish(.stopped)
                reporter.interrupted(error)
                throw ExitCode.interrupted
            }
            await task.finish(.failed(error.description))
            reporter.failed(error)
            throw ExitCode.failure
        }
    }

    /// `--codec avc1,hvc1` as a list of prefixes.
    private var codecList: [String] {
        (codecs ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `-j N` on a file: N range connections (the download manager's engine), resumable through
    /// `FILE.streamkit-ranges`.
    private func runRanged(
        destination: URL, reporter: DownloadReporter, client: HTTPClient, headers: HTTPHeaders,
        task foreground: DownloadForegroundTask
    ) async throws {
        let url = url
        let options = RangedFileOptions(connections: connections ?? 1, maximumConsecutiveFailures: retries + 1)
        let task = Task {
            try await RangedFileDownload.run(
                url: url, to: destination, client: client, headers: headers, options: options,
                onProgress: { done, length in
                    reporter.progress(
                        HTTPClientProgress(
                            bytesReceived: done, expectedLength: length, bytesTransferred: done, bytesPerSecond: nil))
                })
        }
        let monitor = InterruptMonitor { task.cancel() }
        defer { monitor.stop() }
        let started = ContinuousClock.now
        do {
            let result = try await task.value
            await client.shutdown()
            await foreground.finish(.succeeded(bytes: result.byteCount))
            reporter.completed(
                HTTPFileDownloadResult(
                    destination: destination, finalURL: url, byteCount: result.byteCount,
                    resumedFrom: result.resumedFrom, bytesTransferred: result.byteCount - result.resumedFrom,
                    restartedFromZero: false, attempts: 1, validator: result.validator),
                elapsed: started.duration(to: .now))
        } catch {
            await client.shutdown()
            if monitor.wasInterrupted || error is CancellationError {
                await foreground.finish(.stopped)
                reporter.interrupted(HTTPClientError(.cancelled, url: url, detail: "interrupted"))
                throw ExitCode.interrupted
            }
            let failure = HTTPClientError(.transportFailure, url: url, detail: "\(error)")
            await foreground.finish(.failed(failure.description))
            reporter.failed(failure)
            throw ExitCode.failure
        }
    }

    private func runHLS(
        _ context: CommandContext, client: HTTPClient, headers: HTTPHeaders, retry: HTTPClientRetryPolicy,
        queue: DownloadManager
    ) async throws {
        let selection = HLSSelection(
            variant: VariantPreference(variant) ?? .best, audio: RenditionPreference(audio) ?? .automatic,
            subtitles: RenditionPreference(subs) ?? .all, codecs: codecList)
        let id = HLSDownloadJob.packageID(source: url, selection: selection, decrypt: decrypt)
        let inLibrary = output == nil
        let directory: URL
        if let output {
            let expanded = output.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + output.dropFirst(1) : output
            directory = URL(fileURLWithPath: expanded, isDirectory: true)
        } else {
            let library = StreamKitHome.library(
                in: StreamKitHome.resolve(override: home, environment: context.environment))
            directory = URL(fileURLWithPath: library, isDirectory: true).appendingPathComponent(id, isDirectory: true)
        }
        let options = HLSDownloadOptions(
            connections: connections ?? 8, decrypt: decrypt, skipBroken: skipBroken, headers: headers,
            liveDuration: liveDuration.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            maximumSegments: maxSegments, retry: retry)
        let job = HLSDownloadJob(source: url, selection: selection, options: options, packageDirectory: directory)
        // In the library the task's folder is the package id's (the manager's own place for it);
        // -o DIR is a place of the user's.
        let task = try await begin(
            DownloadRequest(
                url: url, kind: .hls, selection: selection, decrypt: decrypt, connections: connections ?? 8,
                headers: headers, location: inLibrary ? nil : directory.standardizedFileURL.path),
            queue: queue, client: client, context: context)
        try await HLSDownloadRun(context: context, json: json, inLibrary: inLibrary).run(
            job, client: client, task: task)
    }

    /// `Name: value` → (name, value); `nil` when there is no colon or the name is not a token.
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

    static func parseHeader(_ text: String) -> (String, String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon]
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" }),
            !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
        else { return nil }
        return (String(name), value)
    }

    /// The file to write: `-o` as a file, `-o` as a directory plus the URL's file name, or the
    /// URL's file name in the current directory. The name from the URL is sanitized.
    private func resolveDestination(_ context: CommandContext) throws -> URL {
        let name = Self.fileName(fromURL: url)
        guard let output else {
            return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(name)
        }
        let expanded = output.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + output.dropFirst(1) : output
        var isDirectory: ObjCBool = false
        if output.hasSuffix("/")
            || (FileManager.default.fileExists(atPath: expanded, isDirectory: &isDirectory)
                && isDirectory.boolValue)
        {
            return URL(fileURLWithPath: expanded, isDirectory: true).appendingPathComponent(name)
        }
        return URL(fileURLWithPath: expanded)
    }

    /// The last path segment of `url`, percent-decoded and made safe as a file name: no
    /// separators, control characters or leading dots; `download` when nothing is left.
    static func fileName(fromURL url: String) -> String {
        let path = URLComponents(string: url)?.percentEncodedPath ?? ""
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let decoded = last.removingPercentEncoding ?? last
        var name = String(
            decoded.unicodeScalars.map { scalar -> Character in
                if scalar == "/" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F { return "_" }
                return Character(scalar)
            })
        while name.hasPrefix(".") { name.removeFirst() }
        name = String(name.prefix(200))
        return name.isEmpty ? "download" : name
    }
}

/// Draws download progress for people on standard error, or JSON lines on standard output.
private final class DownloadReporter: Sendable {
    private let context: CommandContext
    private let json: Bool
    private let url: String
    private let destination: URL
    private let interactive: Bool
    private let task: DownloadForegroundTask
    private let lastLine = Mutex<ContinuousClock.Instant?>(nil)

    init(context: CommandContext, json: Bool, url: String, destination: URL, task: DownloadForegroundTask) {
        self.context = context
        self.json = json
        self.url = url
        self.destination = destination
        self.task = task
        interactive = context.errorOutput.isTerminal
        if !json { context.writeError("Downloading \(url)\n  to \(destination.path)\n") }
    }

    func progress(_ progress: HTTPClientProgress) {
        task.progress(
            done: progress.bytesReceived, expected: progress.expectedLength, bytesPerSecond: progress.bytesPerSecond)
        if json {
            emit(ProgressEvent(progress))
            return
        }
        let line = Self.describe(progress)
        if interactive {
            context.writeError("\r\u{1B}[K" + line)
            return
        }
        // Plain periodic lines when standard error is not a terminal.
        let now = ContinuousClock.now
        let due = lastLine.withLock { last in
            guard last == nil || last!.duration(to: now) >= .seconds(2) else { return false }
            last = now
            return true
        }
        if due { context.writeError(line + "\n") }
    }

    func completed(_ result: HTTPFileDownloadResult, elapsed: Duration) {
        let seconds = max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, 1e-3)
        if json {
            emit(ResultEvent(result: result, seconds: seconds))
            return
        }
        if interactive { context.writeError("\n") }
        var note = ""
        if result.resumedFrom > 0 { note += ", resumed at \(ByteCountText.format(Double(result.resumedFrom)))" }
        if result.restartedFromZero {
            note += ", restarted from zero (the server ignored the range or the file changed)"
        }
        let speed = ByteCountText.format(Double(result.bytesTransferred) / seconds)
        context.write(
            "Saved \(result.destination.path) (\(ByteCountText.format(Double(result.byteCount))), "
                + "\(ByteCountText.fixed(seconds, digits: 1)) s at \(speed)/s\(note))\n")
    }

    func interrupted(_ error: HTTPClientError) {
        let partial = HTTPFileDownloadPaths.partial(for: destination).path
        if json {
            emit(FailureEvent(status: "interrupted", error: error, partial: partial))
            return
        }
        if interactive { context.writeError("\n") }
        context.writeError(
            "Interrupted at \(ByteCountText.format(Double(error.byteOffset ?? 0))); partial data kept in \(partial)."
                + " Run the same command to resume.\n")
    }

    func failed(_ error: HTTPClientError) {
        if json { emit(FailureEvent(status: "failed", error: error, partial: nil)) }
        if interactive && !json { context.writeError("\n") }
        context.writeError("error: \(error)\n")
    }

    private static func describe(_ progress: HTTPClientProgress) -> String {
        var parts: [String] = []
        if let fraction = progress.fractionCompleted {
            parts.append(ByteCountText.fixed(fraction * 100, digits: 1) + "%")
        }
        var amount = ByteCountText.format(Double(progress.bytesReceived))
        if let total = progress.expectedLength { amount += " / " + ByteCountText.format(Double(total)) }
        parts.append(amount)
        if let speed = progress.bytesPerSecond { parts.append(ByteCountText.format(speed) + "/s") }
        if let remaining = progress.estimatedSecondsRemaining, remaining < 360_000 {
            let seconds = Int(remaining.rounded(.up))
            parts.append(
                "ETA "
                    + (seconds >= 3600
                        ? "\(seconds / 3600)h\(seconds % 3600 / 60)m"
                        : "\(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60)"))
        }
        return "  " + parts.joined(separator: "  ")
    }

    private func emit(_ event: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(event) else { return }
        context.write(String(decoding: data, as: UTF8.self) + "\n")
    }

    private struct ProgressEvent: Encodable {
        let event = "progress"
        let bytes: Int64
        let total: Int64?
        let transferred: Int64
        let bytesPerSecond: Double?

        init(_ progress: HTTPClientProgress) {
            bytes = progress.bytesReceived
            total = progress.expectedLength
            transferred = progress.bytesTransferred
            bytesPerSecond = progress.bytesPerSecond.map { $0.rounded() }
        }
    }

    private struct ResultEvent: Encodable {
        let event = "result"
        let status = "completed"
        let path: String
        let url: String
        let bytes: Int64
        let resumedFrom: Int64
        let transferred: Int64
        let restartedFromZero: Bool
        let attempts: Int
        let seconds: Double

        init(result: HTTPFileDownloadResult, seconds: Double) {
            path = result.destination.path
            url = result.finalURL
            bytes = result.byteCount
            resumedFrom = result.resumedFrom
            transferred = result.bytesTransferred
            restartedFromZero = result.restartedFromZero
            attempts = result.attempts
            self.seconds = (seconds * 1000).rounded() / 1000
        }
    }

    private struct FailureEvent: Encodable {
        let event = "result"
        let status: String
        let error: String
        let kind: String
        let url: String?
        let httpStatus: Int?
        let bytes: Int64?
        let partial: String?

        init(status: String, error: HTTPClientError, partial: String?) {
            self.status = status
            self.error = error.description
            kind = error.kind.description
            url = error.url
            httpStatus = error.status?.rawValue
            bytes = error.byteOffset
            self.partial = partial
        }
    }
}
