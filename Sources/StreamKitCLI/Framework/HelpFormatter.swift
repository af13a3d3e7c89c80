/// Builds the text of `--help`: overview, usage, arguments, options, subcommands, examples.
enum HelpFormatter {
    private static let nameColumn = 26

    static func help(for type: any ParsableCommand.Type, path: [String]) -> String {
        let configuration = type.configuration
        let definitions = CommandParser.definitions(of: type)
        var text = "OVERVIEW: \(configuration.abstract)\n\n"
        if !configuration.discussion.isEmpty { text += configuration.discussion + "\n\n" }
        text += "USAGE: \(usage(for: type, path: path))\n"

        let positionals = definitions.filter { $0.kind == .positional }
        if !positionals.isEmpty {
            text += "\nARGUMENTS:\n"
            for definition in positionals { text += row(definition.displayName, describe(definition)) }
        }

        text += "\nOPTIONS:\n"
        for definition in definitions where definition.kind != .positional {
            var name = definition.shortName.map { "-\($0), " } ?? ""
            name += definition.displayName
            if definition.kind == .option { name += " <\(definition.resolvedValueName)>" }
            text += row(name, describe(definition))
        }
        if configuration.version != nil { text += row("--version", "Show the version.") }
        text += row("-h, --help", "Show help information.")

        if !configuration.subcommands.isEmpty {
            var groups: [(String, [any ParsableCommand.Type])] = []
            for subcommand in configuration.subcommands {
                let group = subcommand.configuration.group
                if let index = groups.firstIndex(where: { $0.0 == group }) {
                    groups[index].1.append(subcommand)
                } else {
                    groups.append((group, [subcommand]))
                }
            }
            for (group, members) in groups {
                text += "\n\(group.uppercased()):\n"
                for member in members { text += row(member.configuration.commandName, member.configuration.abstract) }
            }
            text += "\n  See '\(path.joined(separator: " ")) help <command>' for help on a command.\n"
        }

        if !configuration.examples.isEmpty {
            text += "\nEXAMPLES:\n"
            for example in configuration.examples {
                text += "  \(example.summary):\n    \(example.commandLine)\n"
            }
        }
        return text
    }

    static func usage(for type: any ParsableCommand.Type, path: [String]) -> String {
        var parts = [path.joined(separator: " ")]
        if !type.configuration.subcommands.isEmpty { parts.append("<command>") }
        for definition in CommandParser.definitions(of: type) {
            var part: String
            switch definition.kind {
            case .positional:
                part = definition.displayName + (definition.isRepeating ? " ..." : "")
            case .option:
                part = "\(definition.displayName) <\(definition.resolvedValueName)>"
                if definition.isRepeating { part += " ..." }
            case .flag:
                part = definition.displayName
            }
            parts.append(definition.isRequired ? part : "[\(part)]")
        }
        return parts.joined(separator: " ")
    }

    private static func describe(_ definition: ArgumentDefinition) -> String {
        var text = definition.help
        if let defaultDescription = definition.defaultDescription, !defaultDescription.isEmpty {
            text += " (default: \(defaultDescription))"
        }
        return text
    }

    private static func row(_ name: String, _ description: String) -> String {
        let indent = String(repeating: " ", count: nameColumn)
        let label = "  " + name
        if label.count + 1 >= nameColumn { return label + "\n" + indent + description + "\n" }
        return label + String(repeating: " ", count: nameColumn - label.count) + description + "\n"
    }
}
