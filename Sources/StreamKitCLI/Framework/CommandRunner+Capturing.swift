extension CommandRunner {
    /// Runs the command line `arguments` against `root` in this process, with standard output and
    /// standard error kept in memory: how tests, and programs that embed the commands, run one.
    ///
    /// - Parameters:
    ///   - root: The command tree; `streamkit`'s by default.
    ///   - arguments: The command line, without the program name.
    ///   - environment: The environment the command sees (`STREAMKIT_HOME`, say).
    /// - Returns: The exit code and what the command wrote to each stream.
    public static func runCapturing(
        _ root: any ParsableCommand.Type = StreamKitCommand.self, arguments: [String],
        environment: [String: String] = [:]
    ) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing(environment: environment)
        let code = await run(root, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }
}
