/// `streamkit completions bash|zsh|fish`.
struct CompletionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print a completion script for bash, zsh or fish.",
        discussion: """
            The script completes commands, options, the words an option takes (such as --variant best \
            or worst), file names, and the task ids of the queue commands. It is generated from the \
            commands themselves, so it always matches this streamkit.
            """,
        examples: [
            .init(
                "Complete streamkit in bash from now on",
                "streamkit completions bash > ~/.local/share/bash-completion/completions/streamkit"),
            .init("Try it in this bash", "source <(streamkit completions bash)"),
            .init(
                "Complete streamkit in fish", "streamkit completions fish > ~/.config/fish/completions/streamkit.fish"),
        ],
        group: "Shell")

    @Argument(help: "The shell.") var shell: CompletionShell

    init() {}

    func run(_ context: CommandContext) async throws {
        context.write(CompletionScript.script(for: shell, tree: CommandTree(root: StreamKitCommand.self)))
    }
}

/// `streamkit manpage`.
struct ManpageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "manpage",
        abstract: "Print the manual page, streamkit.1, made from the help of every command.",
        examples: [
            .init("Read it", "streamkit manpage > streamkit.1 && man -l streamkit.1"),
            .init("Install it", "streamkit manpage > /usr/local/share/man/man1/streamkit.1"),
        ],
        group: "Shell")

    init() {}

    func run(_ context: CommandContext) async throws {
        context.write(
            ManualPage.page(tree: CommandTree(root: StreamKitCommand.self), version: "streamkit \(streamKitVersion)"))
    }
}
