import Foundation
import Synchronization

/// A small logging facade in the shape of swift-log: a value-type `Logger` in front of a
/// `LogHandler` backend. Libraries take a logger from their caller and never build their own;
/// the default is ``Logger/disabled``.
public struct Logger: Sendable {
    /// How much a message matters, in increasing order.
    public enum Level: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }
    }

    /// What the logger is about, such as `streamkit.http`.
    public var label: String
    /// Messages below this level are dropped before they are formatted.
    public var logLevel: Level
    /// Key-value context attached to every message from this logger.
    public var metadata: [String: String]
    /// Where records go.
    public var handler: any LogHandler

    /// Creates a logger.
    ///
    /// - Parameters:
    ///   - label: What the logger is about.
    ///   - level: The lowest level that is passed to the handler.
    ///   - handler: Where records go; standard error by default.
    public init(label: String, level: Level = .info, handler: any LogHandler = StreamLogHandler.standardError) {
        self.label = label
        self.logLevel = level
        self.metadata = [:]
        self.handler = handler
    }

    /// A logger that drops everything: the default for library entry points.
    public static let disabled = Logger(label: "disabled", level: .critical, handler: NoOpLogHandler())

    /// Sends a message at `level` to the handler when the level is enabled.
    ///
    /// The message is an autoclosure, so a disabled level costs no formatting.
    public func log(
        level: Level, _ message: @autoclosure () -> String, metadata extra: [String: String] = [:],
        file: String = #fileID, line: UInt = #line
    ) {
        guard level >= logLevel else { return }
        let merged = extra.isEmpty ? metadata : metadata.merging(extra) { _, new in new }
        handler.log(
            LogRecord(
                level: level, label: label, message: message(), metadata: merged, file: file, line: line,
                date: Date()))
    }

    /// Logs at ``Level/trace``.
    public func trace(
        _ message: @autoclosure () -> String, metadata: [String: String] = [:], file: String = #fileID,
        line: UInt = #line
    ) {
        log(level: .trace, message(), metadata: metadata, file: file, line: line)
    }

    /// Logs at ``Level/debug``.
    public func debug(
        _ message: @autoclosure () -> String, metadata: [String: String] = [:], file: String = #fileID,
        line: UInt = #line
    ) {
        log(level: .debug, message(), metadata: metadata, file: file, line: line)
    }

    /// Logs at ``Level/info``.
    public func info(
        _ message: @autoclosure () -> String, metadata: [String: String] = [:], file: String = #fileID,
        line: UInt = #line
    ) {
        log(level: .info, message(), metadata: metadata, file: file, line: line)
    }

    /// Logs at ``Level/warning``.
    public func warning(
        _ message: @autoclosure () -> String, metadata: [String: String] = [:], file: String = #fileID,
        line: UInt = #line
    ) {
        log(level: .warning, message(), metadata: metadata, file: file, line: line)
    }

    /// Logs at ``Level/error``.
    public func error(
        _ message: @autoclosure () -> String, metadata: [String: String] = [:], file: String = #fileID,
        line: UInt = #line
    ) {
        log(level: .error, message(), metadata: metadata, file: file, line: line)
    }

    /// A copy of this logger with `value` added to its metadata under `key`.
    public func with(_ key: String, _ value: String) -> Logger {
        var copy = self
        copy.metadata[key] = value
        return copy
    }
}

/// One log message with its context.
public struct LogRecord: Sendable {
    public var level: Logger.Level
    public var label: String
    public var message: String
    public var metadata: [String: String]
    public var file: String
    public var line: UInt
    public var date: Date
}

/// A logging backend.
public protocol LogHandler: Sendable {
    /// Records one message. Called from any thread; must not block for long.
    func log(_ record: LogRecord)
}

/// Drops every record.
public struct NoOpLogHandler: LogHandler {
    public init() {}
    public func log(_ record: LogRecord) {}
}

/// Writes one line a record to standard error: `LEVEL label: message key=value ...`.
public struct StreamLogHandler: LogHandler {
    /// The handler that writes to standard error.
    public static let standardError = StreamLogHandler()

    private static let lock = Mutex(())

    public func log(_ record: LogRecord) {
        var line = "\(record.level.description.uppercased()) \(record.label): \(record.message)"
        for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += "\n"
        Self.lock.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
    }
}

/// Keeps records in memory: for tests that assert what was logged.
public final class InMemoryLogHandler: LogHandler {
    private let storage = Mutex<[LogRecord]>([])

    public init() {}

    public func log(_ record: LogRecord) { storage.withLock { $0.append(record) } }

    /// Every record so far, oldest first.
    public var records: [LogRecord] { storage.withLock { $0 } }
}
