import Foundation
import Synchronization

/// A value in a `--json` output line.
public enum JSONValue: Hashable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)

    /// The value as JSON text.
    public var json: String {
        switch self {
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            guard number.isFinite else { return "null" }
            if number == number.rounded() && abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .string(let text):
            var escaped = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "\""
        }
    }

    /// One JSON object with keys in sorted order.
    public static func object(_ fields: [String: JSONValue]) -> String {
        "{" + fields.keys.sorted().map { "\(JSONValue.string($0).json):\(fields[$0]!.json)" }.joined(separator: ",")
            + "}"
    }
}

/// Progress output per docs/CLI.md: redrawn in place on a terminal, a plain line every few
/// seconds otherwise, and with `--json` one object per line (progress events, then the result).
public final class ProgressPrinter: Sendable {
    private let context: CommandContext
    private let json: Bool
    private let lastPrinted = Mutex<ContinuousClock.Instant?>(nil)
    /// Draws the line in place, cut to the terminal's width.
    private let display: ProgressDisplay

    public init(context: CommandContext, json: Bool) {
        self.context = context
        self.json = json
        display = ProgressDisplay(sink: context.output)
    }

    /// Reports progress; throttled so that output stays readable.
    public func report(_ text: String, fields: [String: JSONValue]) {
        let interval: Duration = json || context.output.isTerminal ? .seconds(1) : .seconds(5)
        let now = ContinuousClock.now
        let due = lastPrinted.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
        guard due else { return }
        if json {
            context.write(JSONValue.object(fields.merging(["event": .string("progress")]) { $1 }) + "\n")
        } else if display.isInteractive {
            display.update(texts: [text])
        } else {
            context.write(text + "\n")
        }
    }

    /// Prints the final result.
    public func finish(_ text: String, fields: [String: JSONValue]) {
        if json {
            context.write(JSONValue.object(fields.merging(["event": .string("result")]) { $1 }) + "\n")
        } else if display.isInteractive {
            display.finish()
            context.write("\r\u{1B}[K" + text + "\n")
        } else {
            context.write(text + "\n")
        }
    }
}
