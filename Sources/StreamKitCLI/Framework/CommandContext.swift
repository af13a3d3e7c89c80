import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's text goes: a file descriptor, or memory for in-process tests.
public final class OutputSink: Sendable {
    private enum Target {
        case fileDescriptor(Int32)
        case memory
    }

    private let target: Target
    private let captured = Mutex("")

    private init(_ target: Target) { self.target = target }

    /// The process's standard output.
    public static let standardOutput = OutputSink(.fileDescriptor(STDOUT_FILENO))
    /// The process's standard error.
    public static let standardError = OutputSink(.fileDescriptor(STDERR_FILENO))

    /// A sink that keeps everything written, for tests.
    public static func memory() -> OutputSink { OutputSink(.memory) }

    /// Everything written so far, for a memory sink; empty for a file descriptor.
    public var text: String { captured.withLock { $0 } }

    /// Writes `text` as it is (no newline is added).
    public func write(_ text: String) {
        switch target {
        case .memory: captured.withLock { $0 += text }
        case .fileDescriptor: write(bytes: Array(text.utf8))
        }
    }

    /// Writes UTF-8 bytes as they are (a memory sink needs whole characters in each call).
    public func write(bytes: [UInt8]) {
        switch target {
        case .memory:
            captured.withLock { $0 += String(decoding: bytes, as: UTF8.self) }
        case .fileDescriptor(let descriptor):
            var bytes = bytes[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                bytes = bytes.dropFirst(written)
            }
        }
    }

    /// Whether the sink is a terminal (progress is drawn in place only then).
    public var isTerminal: Bool {
        if case .fileDescriptor(let descriptor) = target { return isatty(descriptor) == 1 }
        return false
    }
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// What a running command may use from its surroundings: output streams and the environment.
///
/// Commands write through the context, never to the process's streams directly, so tests can
/// run them in-process and read what they printed.
public struct CommandContext: Sendable {
    /// Standard output: results, and in `--json` mode nothing but JSON lines.
    public let output: OutputSink
    /// Standard error: diagnostics and progress for people.
    public let errorOutput: OutputSink
    /// The environment variables the command sees.
    public let environment: [String: String]

    public init(output: OutputSink, errorOutput: OutputSink, environment: [String: String]) {
        self.output = output
        self.errorOutput = errorOutput
        self.environment = environment
    }

    /// The real process streams and environment.
    public static var process: CommandContext {
        CommandContext(
            output: .standardOutput, errorOutput: .standardError, environment: ProcessInfo.processInfo.environment)
    }

    /// Memory streams and the given environment, for tests.
    public static func capturing(environment: [String: String] = [:]) -> CommandContext {
        CommandContext(output: .memory(), errorOutput: .memory(), environment: environment)
    }

    /// Writes to standard output.
    public func write(_ text: String) { output.write(text) }

    /// Writes to standard error.
    public func writeError(_ text: String) { errorOutput.write(text) }
}
