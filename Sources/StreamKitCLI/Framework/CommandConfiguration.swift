/// What a command is called, what it does, how to use it, and which subcommands it has.
public struct CommandConfiguration: Sendable {
    /// An example invocation shown in help.
    public struct Example: Sendable {
        /// One line saying what the example does.
        public let summary: String
        /// The command line, starting with `streamkit`.
        public let commandLine: String

        public init(_ summary: String, _ commandLine: String) {
            self.summary = summary
            self.commandLine = commandLine
        }
    }

    /// The name typed on the command line.
    public let commandName: String
    /// One line saying what the command does.
    public let abstract: String
    /// Longer text shown under the usage line.
    public let discussion: String
    /// Examples, shown last in help.
    public let examples: [Example]
    /// The commands below this one.
    public let subcommands: [any ParsableCommand.Type]
    /// The heading under which the parent lists this command (`streamkit help` groups by job).
    public let group: String
    /// The version printed by `--version`, for the root command.
    public let version: String?

    public init(
        commandName: String, abstract: String, discussion: String = "", examples: [Example] = [],
        subcommands: [any ParsableCommand.Type] = [], group: String = "Commands", version: String? = nil
    ) {
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
        self.examples = examples
        self.subcommands = subcommands
        self.group = group
        self.version = version
    }
}

/// Arguments that parse together: a command's, or an option group's (see ``OptionGroup``).
///
/// Arguments are declared with ``Argument``, ``Option``, ``Flag`` and ``OptionGroup``; the parser
/// reads their declarations from a default instance and fills them in by decoding, so the type is
/// `Decodable` with a synthesized conformance and a no-argument `init()`.
public protocol ParsableArguments: Decodable, SendableMetatype {
    /// An instance holding only argument declarations (and their defaults).
    init()

    /// Checks the parsed values; throw ``ValidationError`` naming the bad argument. An option
    /// group's runs before the command's.
    mutating func validate() throws
}

extension ParsableArguments {
    public mutating func validate() throws {}
}

/// A command: its configuration, its arguments as property wrappers, `validate()` and `run()`.
public protocol ParsableCommand: ParsableArguments {
    /// The name, abstract, examples and subcommands.
    static var configuration: CommandConfiguration { get }

    /// Does the job. Throw ``ExitCode`` to end with a status other than 0.
    func run(_ context: CommandContext) async throws
}

extension ParsableCommand {
    /// A command with subcommands and nothing of its own prints its help.
    public func run(_ context: CommandContext) async throws {
        context.write(
            HelpFormatter.help(
                for: Self.self, path: [Self.configuration.commandName], width: HelpFormatter.width(for: context)))
    }
}
