/// Every command of a command line with what a shell script or the manual page needs of it: its
/// path, subcommands, options and positional arguments, read from the same declarations as help
/// (``CommandParser/definitions(of:)``), so that the three never disagree.
struct CommandTree {
    /// One command.
    struct Node {
        /// `["streamkit", "queue", "start"]`.
        var path: [String]
        var type: any ParsableCommand.Type
        /// The names of the commands below it, in declaration order.
        var subcommands: [String]
        /// Its options and flags, `--help` (and, for the root, `--version`) included.
        var options: [ArgumentDefinition]
        /// Its positional arguments, in order.
        var positionals: [ArgumentDefinition]

        var configuration: CommandConfiguration { type.configuration }
        /// The path as one string: `streamkit queue start`.
        var name: String { path.joined(separator: " ") }
        /// The options that take a value, with their long and short spellings.
        var valuedOptionWords: [String] {
            options.filter { $0.kind == .option }.flatMap(Self.spellings)
        }

        /// `--jobs` and `-j`.
        static func spellings(_ definition: ArgumentDefinition) -> [String] {
            ["--" + definition.resolvedLongName] + (definition.shortName.map { ["-" + String($0)] } ?? [])
        }
    }

    /// Root first, each command before the ones below it.
    let nodes: [Node]

    init(root: any ParsableCommand.Type) {
        var nodes: [Node] = []
        Self.visit(root, path: [root.configuration.commandName], into: &nodes)
        self.nodes = nodes
    }

    /// Adds `type` and the commands below it, depth first.
    private static func visit(_ type: any ParsableCommand.Type, path: [String], into nodes: inout [Node]) {
        let definitions = CommandParser.definitions(of: type)
        var options = definitions.filter { $0.kind != .positional }
        options.append(
            ArgumentDefinition(
                kind: .flag, longName: "help", shortName: "h", help: "Show help information.", isRequired: false,
                isRepeating: false, valueDescription: ""))
        if type.configuration.version != nil {
            options.append(
                ArgumentDefinition(
                    kind: .flag, longName: "version", help: "Show the version.", isRequired: false,
                    isRepeating: false, valueDescription: ""))
        }
        let subcommands = type.configuration.subcommands
        nodes.append(
            Node(
                path: path, type: type, subcommands: subcommands.map { $0.configuration.commandName }, options: options,
                positionals: definitions.filter { $0.kind == .positional }))
        for subcommand in subcommands {
            visit(subcommand, path: path + [subcommand.configuration.commandName], into: &nodes)
        }
    }

    /// The program's name (the root command's).
    var programName: String { nodes[0].path[0] }
}
