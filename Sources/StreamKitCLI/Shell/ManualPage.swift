import Foundation

/// The manual page (`streamkit.1`, roff with the `man` macros) written from what help shows:
/// every command's abstract, discussion, usage, arguments, options and examples, under one
/// COMMANDS section in the order of the command tree.
enum ManualPage {
    static func page(tree: CommandTree, version: String) -> String {
        let root = tree.nodes[0]
        let program = tree.programName
        var page = ".TH \(program.uppercased()) 1 \"\" \(quoted(version)) \"User Commands\"\n"
        page += ".SH NAME\n\(escaped(program)) \\- \(escaped(root.configuration.abstract))\n"
        page += ".SH SYNOPSIS\n.B \(escaped(program))\n.I command\n[\\fIoptions\\fR]\n"
        page += ".SH DESCRIPTION\n" + paragraph(root.configuration.discussion)
        page += ".SH COMMANDS\n"
        for node in tree.nodes.dropFirst() {
            page += ".SS \(quoted(node.name))\n" + paragraph(node.configuration.abstract)
            if !node.configuration.discussion.isEmpty { page += ".PP\n" + paragraph(node.configuration.discussion) }
            page += ".PP\n.B Usage:\n" + escaped(HelpFormatter.usage(for: node.type, path: node.path)) + "\n"
            page += entries(node)
            page += examples(node.configuration.examples)
        }
        page += ".SH OPTIONS\n" + entries(root)
        page += ".SH EXAMPLES\n" + examples(root.configuration.examples)
        page += ".SH SEE ALSO\n"
        page += "\\fB\(escaped(program)) help\\fR \\fIcommand\\fR prints the help of one command; "
        page += "\\fB\(escaped(program)) completions\\fR writes shell completion scripts.\n"
        return page
    }

    /// A command's arguments and options, each a tagged paragraph.
    private static func entries(_ node: CommandTree.Node) -> String {
        var text = ""
        for definition in node.positionals + node.options {
            var name = definition.shortName.map { "\\fB\\-\($0)\\fR, " } ?? ""
            switch definition.kind {
            case .positional: name = "\\fI" + escaped(definition.displayName) + "\\fR"
            case .flag: name += "\\fB" + escaped(definition.displayName) + "\\fR"
            case .option:
                name += "\\fB" + escaped(definition.displayName) + "\\fR \\fI<"
                name += escaped(definition.resolvedValueName) + ">\\fR"
            }
            text += ".TP\n" + name + "\n" + escaped(HelpFormatter.describe(definition)) + "\n"
        }
        return text
    }

    private static func examples(_ examples: [CommandConfiguration.Example]) -> String {
        var text = ""
        for example in examples {
            text += ".PP\n" + escaped(example.summary) + ":\n.RS 4\n.EX\n" + escaped(example.commandLine)
            text += "\n.EE\n.RE\n"
        }
        return text
    }

    /// `text` as running text, a blank line starting a new paragraph.
    private static func paragraph(_ text: String) -> String {
        guard !text.isEmpty else { return "" }
        return escaped(text).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? ".PP" : String($0) }.joined(separator: "\n") + "\n"
    }

    /// `text` as roff text: backslashes and hyphens escaped, and a line starting with `.` or `'`
    /// (a request to roff) guarded.
    static func escaped(_ text: String) -> String {
        let body = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        return body.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }

    /// A macro argument in double quotes (a double quote inside doubled, as groff reads it).
    private static func quoted(_ text: String) -> String {
        "\"" + escaped(text).replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
