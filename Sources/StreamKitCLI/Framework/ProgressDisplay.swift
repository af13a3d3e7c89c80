import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One task's progress, as every command reports it.
public struct ProgressLine: Hashable, Sendable {
    /// Names the task when several are shown (a title or an id).
    public var label: String?
    /// Done, from 0 to 1, when known.
    public var fraction: Double?
    /// Bytes done.
    public var bytes: Int64
    /// Bytes in all, when known.
    public var totalBytes: Int64?
    /// Whether ``totalBytes`` is an estimate (shown with `~`).
    public var totalIsEstimate: Bool = false
    /// Smoothed bytes a second.
    public var bytesPerSecond: Double?
    /// Seconds left, when they can be estimated.
    public var secondsRemaining: Double?
    /// Files done and in all (HLS segments, keys and maps).
    public var files: FileCount?
    /// Anything else worth a word (`2 skipped`, `recorded 12.0 s / 60 s`).
    public var note: String?

    /// Files done out of a total.
    public struct FileCount: Hashable, Sendable {
        public var done: Int
        public var total: Int
        public init(done: Int, total: Int) {
            self.done = done
            self.total = total
        }
    }

    /// The line as text: `[######------]  45.2%  12/40 files  12.1 MB / ~26.8 MB  3.2 MB/s  ETA 0:05`.
    ///
    /// With a `width`, a bar fills what the fields leave (10 to 30 columns), fields are dropped
    /// from the least useful when even that does not fit, and the result never exceeds
    /// `width - 1` columns (the last column would wrap on some terminals). Without one (a log),
    /// there is no bar and nothing is cut.
    public func text(width: Int? = nil) -> String {
        var fields: [String] = []
        if let fraction { fields.append(ByteCountText.fixed(min(max(fraction, 0), 1) * 100, digits: 1) + "%") }
        if let files { fields.append("\(files.done)/\(files.total) files") }
        var amount = ByteCountText.format(Double(bytes))
        if let totalBytes { amount += (totalIsEstimate ? " / ~" : " / ") + ByteCountText.format(Double(totalBytes)) }
        fields.append(amount)
        if let bytesPerSecond { fields.append(ByteCountText.format(bytesPerSecond) + "/s") }
        if let secondsRemaining, secondsRemaining.isFinite { fields.append("ETA " + Self.clock(secondsRemaining)) }
        if let note { fields.append(note) }
        let prefix = label.map { $0 + "  " } ?? ""
        guard let width else { return prefix + fields.joined(separator: "  ") }
        let room = max(width - 1, 10)
        // Least useful first out: the note, the ETA, the speed, the files.
        var kept = fields
        func joined() -> String { prefix + kept.joined(separator: "  ") }
        while joined().count > room && kept.count > 1 { kept.removeLast() }
        var text = joined()
        if text.count > room { text = String(text.prefix(room)) }
        let barRoom = room - text.count - 2
        if let fraction, barRoom >= 12 {
            let inner = min(barRoom, 32) - 2
            let filled = Int((min(max(fraction, 0), 1) * Double(inner)).rounded(.down))
            let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: inner - filled) + "]"
            text = prefix + bar + "  " + kept.joined(separator: "  ")
        }
        return text
    }

    /// `0:05`, `12:34`, `1h02m`.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3600 { return "\(whole / 3600)h" + (whole % 3600 / 60 < 10 ? "0" : "") + "\(whole % 3600 / 60)m" }
        return "\(whole / 60):" + (whole % 60 < 10 ? "0" : "") + "\(whole % 60)"
    }
}

/// Draws progress per docs/CLI.md: on a terminal, one line per task redrawn in place (at most
/// ten frames a second, each frame one write, every line cut to the terminal's width); anywhere
/// else, plain lines at most every `logInterval`, and the final state once at the end.
public final class ProgressDisplay: Sendable {
    private let sink: OutputSink
    /// Whether the sink is a terminal (lines are redrawn in place).
    public let isInteractive: Bool
    private let logInterval: Duration
    private struct State {
        var drawnLines = 0
        var lastFrame: ContinuousClock.Instant?
        var lastLog: ContinuousClock.Instant?
        var pending: [String]?
        var lastLogged: [String] = []
    }
    private let state = Mutex(State())

    /// A display on `sink` (standard error for commands whose standard output is a result).
    public init(sink: OutputSink, logInterval: Duration = .seconds(2)) {
        self.sink = sink
        isInteractive = sink.isTerminal
        self.logInterval = logInterval
    }

    /// Shows the tasks' progress now, or at the next frame or log line that is due.
    public func update(_ lines: [ProgressLine]) {
        draw { width in lines.map { $0.text(width: width) } }
    }

    /// Shows lines of text formatted by the caller, cut to the terminal's width.
    public func update(texts: [String]) {
        draw { width in
            texts.map { text in width.map { text.count >= $0 ? String(text.prefix(max($0 - 1, 10))) : text } ?? text }
        }
    }

    private func draw(_ render: (Int?) -> [String]) {
        let now = ContinuousClock.now
        if isInteractive {
            let texts = render(terminalColumns())
            let frame: String? = state.withLock { state in
                state.pending = texts
                if let last = state.lastFrame, last.duration(to: now) < .milliseconds(100) { return nil }
                state.lastFrame = now
                return Self.frame(texts, replacing: &state)
            }
            if let frame { sink.write(frame) }
        } else {
            let texts = render(nil)
            let due: Bool = state.withLock { state in
                state.pending = texts
                if let last = state.lastLog, last.duration(to: now) < logInterval { return false }
                state.lastLog = now
                state.lastLogged = texts
                state.pending = nil
                return true
            }
            if due { sink.write(texts.map { $0 + "\n" }.joined()) }
        }
    }

    /// Writes `text` (whole lines) above the progress lines, which are drawn again below it.
    public func message(_ text: String) {
        let output: String = state.withLock { state in
            guard isInteractive, state.drawnLines > 0 else { return text }
            var frame = Self.clear(&state) + text
            if let pending = state.pending { frame += Self.frame(pending, replacing: &state) }
            return frame
        }
        sink.write(output)
    }

    /// Ends the display: the last state is shown (in place on a terminal, as a last log line if
    /// it changed since the last one otherwise) and the cursor moves to a new line.
    public func finish() {
        let output: String = state.withLock { state in
            if isInteractive {
                var frame = ""
                if let pending = state.pending { frame = Self.frame(pending, replacing: &state) }
                if state.drawnLines > 0 { frame += "\n" }
                state.drawnLines = 0
                state.pending = nil
                return frame
            }
            guard let pending = state.pending, pending != state.lastLogged else { return "" }
            state.lastLogged = pending
            state.pending = nil
            return pending.map { $0 + "\n" }.joined()
        }
        if !output.isEmpty { sink.write(output) }
    }

    /// Moves to the first drawn line and clears it: the frame then writes from there.
    private static func clear(_ state: inout State) -> String {
        guard state.drawnLines > 0 else { return "" }
        var text = "\r"
        if state.drawnLines > 1 { text += "\u{1B}[\(state.drawnLines - 1)A" }
        text += "\u{1B}[J"
        state.drawnLines = 0
        return text
    }

    private static func frame(_ texts: [String], replacing state: inout State) -> String {
        let text = clear(&state) + texts.joined(separator: "\n")
        state.drawnLines = texts.count
        return text
    }

    /// The terminal's width: `TIOCGWINSZ` on standard error or output, else `$COLUMNS`, else 80.
    private func terminalColumns() -> Int {
        TerminalWidth.columns(of: [STDERR_FILENO, STDOUT_FILENO], environment: ProcessInfo.processInfo.environment)
    }
}
