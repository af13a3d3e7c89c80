/// How the process ends, per docs/CLI.md. Thrown from `run()` to end with a code other than 0.
public struct ExitCode: Error, Hashable, Sendable, CustomStringConvertible {
    /// The process exit status.
    public let rawValue: Int32

    /// Creates an exit code with an arbitrary status.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// 0: the job finished.
    public static let success = ExitCode(0)
    /// 1: the job failed; the reason is on standard error.
    public static let failure = ExitCode(1)
    /// 2: the job finished with gaps (some segments skipped on request).
    public static let finishedWithGaps = ExitCode(2)
    /// 64: the command line was wrong (EX_USAGE); the message names the bad argument.
    public static let usage = ExitCode(64)
    /// 130: interrupted by Ctrl-C, with all state saved so the same command resumes.
    public static let interrupted = ExitCode(130)

    public var description: String { "exit code \(rawValue)" }
}

/// A command line that parsed but makes no sense, raised from `validate()`: exit code 64.
public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the argument.
    public let message: String

    /// Creates a validation error; say which argument is wrong and what is expected.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// A command line that does not parse: unknown option, missing or malformed value. Exit code 64.
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the argument.
    public let message: String
    /// The command path the error belongs to, for the usage hint.
    public let commandPath: [String]

    init(_ message: String, commandPath: [String]) {
        self.message = message
        self.commandPath = commandPath
    }

    public var description: String { message }
}
