#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds the text of `--help`: overview, usage, arguments, options, subcommands, examples,
/// wrapped to a width with descriptions hanging in their column.
package enum HelpFormatter {
    private static let nameColumn = 26
    /// The width of help when standard output is not a terminal.
    package static let defaultWidth = 80

    /// The width to wrap help to: the terminal's when standard output is one, else 80 columns.
    static func width(for context: CommandContext) -> Int {
        guard context.output.isTerminal else { return defaultWidth }
        return TerminalWidth.columns(of: [STDOUT_FILENO], environment: context.environment)
    }

    static func help(for type: any ParsableCommand.Type, path: [String], width: Int) -> String {
        let configuration = type.configuration
        let definitions = CommandParser.definitions(of: type)
        var text = wrap(configuration.abstract, width: width, prefix: "OVERVIEW: ") + "\n\n"
        if !configuration.discussion.isEmpty { text += wrap(configuration.discussion, width: width) + "\n\n" }
        text += wrap(words: usageParts(for: type, path: path), width: width, prefix: "USAGE: ", indent: 7) + "\n"

        let positionals = definitions.filter { $0.kind == .positional }
        if !positionals.isEmpty {
            text += "\nARGUMENTS:\n"
            for definition in positionals { text += row(definition.displayName, describe(definition), width: width) }
        }

        text += "\nOPTIONS:\n"
        for definition in definitions where definition.kind != .positional {
            var name = definition.shortName.map { "-\($0), " } ?? ""
            name += definition.displayName
            if definition.kind == .option { name += " <\(definition.resolvedValueName)>" }
            text += row(name, describe(definition), width: width)
        }
        if configuration.version != nil { text += row("--version", "Show the version.", width: width) }
        text += row("-h, --help", "Show help information.", width: width)

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
                for member in members {
                    text += row(member.configuration.commandName, member.configuration.abstract, width: width)
                }
            }
            // `help` goes after the tool's name: `streamkit help queue add`.
            let helpPath = (path.prefix(1) + ["help"] + path.dropFirst()).joined(separator: " ")
            let hint = "See '\(helpPath) <command>' for help on a command."
            text += "\n" + wrap(hint, width: width, prefix: "  ", indent: 2) + "\n"
        }

        if !configuration.examples.isEmpty {
            text += "\nEXAMPLES:\n"
            for example in configuration.examples {
                text += wrap(example.summary + ":", width: width, prefix: "  ", indent: 4) + "\n"
                text += wrap(example.commandLine, width: width, prefix: "    ", indent: 6) + "\n"
            }
        }
        return text
    }

    /// The usage line: the command path, then each argument (optional ones in brackets).
    static func usage(for type: any ParsableCommand.Type, path: [String]) -> String {
        usageParts(for: type, path: path).joined(separator: " ")
    }

    /// `text` in lines of at most `width` columns, broken at spaces: the first line starts with
    /// `prefix`, the others with `indent` spaces. Line breaks in `text` are kept; a word wider than
    /// the room has a line to itself. No newline at the end.
    package static func wrap(_ text: String, width: Int, prefix: String = "", indent: Int = 0) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
            wrap(
                words: line.split(separator: " ").map(String.init), width: width,
                prefix: index == 0 ? prefix : String(repeating: " ", count: indent), indent: indent)
        }.joined(separator: "\n")
    }

    /// `words` joined by spaces in lines of at most `width` columns, as ``wrap(_:width:prefix:indent:)``.
    package static func wrap(words: [String], width: Int, prefix: String = "", indent: Int = 0) -> String {
        var lines: [String] = []
        var line = prefix
        var lineHasWord = false
        for word in words {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent) + word
            } else {
                line += (lineHasWord ? " " : "") + word
            }
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    private static func usageParts(for type: any ParsableCommand.Type, path: [String]) -> [String] {
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
        return parts
    }

    static func describe(_ definition: ArgumentDefinition) -> String {
        var text = definition.help
        if let defaultDescription = definition.defaultDescription, !defaultDescription.isEmpty {
            text += " (default: \(defaultDescription))"
        }
        return text
    }

    /// A name and its description, which hangs in the description column (below the name when
    /// the name reaches into that column).
    private static func row(_ name: String, _ description: String, width: Int) -> String {
        let indent = String(repeating: " ", count: nameColumn)
        let label = "  " + name
        let room = max(width, nameColumn + 20)
        if label.count + 1 >= nameColumn {
            return label + "\n" + wrap(description, width: room, prefix: indent, indent: nameColumn) + "\n"
        }
        let prefix = label + String(repeating: " ", count: nameColumn - label.count)
        return wrap(description, width: room, prefix: prefix, indent: nameColumn) + "\n"
    }
}
