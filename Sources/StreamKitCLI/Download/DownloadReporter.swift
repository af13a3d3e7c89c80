import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

/// Draws download progress for people on standard error, or JSON lines on standard output.
final class DownloadReporter: Sendable {
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
