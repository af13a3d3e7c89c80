import Core
import Foundation
import HTTP
import Synchronization

/// `streamkit download URL -o FILE`: a progressive file over HTTP(S), resumable.
///
/// HLS packages and `-j` range connections arrive with their issues; until then a playlist URL
/// is downloaded as a plain file.
struct DownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download a file over HTTP or HTTPS, resuming where an earlier run stopped.",
        discussion: """
            Downloads a progressive file (MP4, MP3, TS, anything) to completion with progress on
            standard error. Partial data is kept next to the target as FILE.streamkit-partial, with
            its validator in FILE.streamkit-resume; running the same command again resumes from the
            byte reached (If-Range: a file changed on the server starts over). Failed attempts are
            retried with backoff from the byte reached. Ctrl-C stops cleanly and exits 130.
            HLS is not handled yet: a playlist URL is downloaded as a plain file.
            """,
        examples: [
            .init("Download a file into the current directory", "streamkit download https://example.com/video.mp4"),
            .init(
                "Download to a path at most 2 MB a second",
                "streamkit download URL -o ~/Movies/talk.mp4 --limit-rate 2M"),
            .init("Send a header and print JSON progress", "streamkit download URL -H 'Cookie: a=1' --json"),
        ],
        group: "Downloads")

    @Argument(valueName: "url", help: "The http or https URL to download.") var url: String
    @Option(
        name: "output", short: "o", valueName: "path",
        help: "The file to write, or a directory to write it into (default: the URL's file name here).")
    var output: String?
    @Option(valueName: "rate", help: "At most this many bytes a second in all, such as 500k or 2M.")
    var limitRate: TransferRate?
    @Option(name: "header", short: "H", valueName: "header", help: "An extra request header, 'Name: value'.")
    var headers: [String] = []
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
    }

    func run(_ context: CommandContext) async throws {
        let destination = try resolveDestination(context)
        var request = HTTPClientRequest(url: url)
        for header in headers {
            if let (name, value) = Self.parseHeader(header) { request.headers.add(name, value) }
        }
        let client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                userAgent: "streamkit/\(streamKitVersion)", environment: context.environment,
                globalReceiveRate: limitRate?.bytesPerSecond, bodyBufferLimit: 256 << 10,
                receiveBufferSize: 256 << 10))
        let reporter = DownloadReporter(context: context, json: json, url: url, destination: destination)
        let download = client.download(
            request, to: destination,
            options: HTTPFileDownloadOptions(retry: HTTPClientRetryPolicy(maximumAttempts: retries + 1)))
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
            reporter.completed(result, elapsed: started.duration(to: .now))
        } catch let error as HTTPClientError {
            await progress.value
            await client.shutdown()
            if monitor.wasInterrupted || error.kind == .cancelled {
                reporter.interrupted(error)
                throw ExitCode.interrupted
            }
            reporter.failed(error)
            throw ExitCode.failure
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
    private let lastLine = Mutex<ContinuousClock.Instant?>(nil)

    init(context: CommandContext, json: Bool, url: String, destination: URL) {
        self.context = context
        self.json = json
        self.url = url
        self.destination = destination
        interactive = context.errorOutput.isTerminal
        if !json { context.writeError("Downloading \(url)\n  to \(destination.path)\n") }
    }

    func progress(_ progress: HTTPClientProgress) {
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
