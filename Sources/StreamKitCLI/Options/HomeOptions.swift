/// `--home DIR`, for every command that uses StreamKit's data (docs/CLI.md).
struct HomeOptions: ParsableArguments {
    @Option(
        name: "home", valueName: "dir",
        help: "StreamKit's data (default: $STREAMKIT_HOME, $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).")
    var directory: String?

    init() {}

    /// The home directory: `--home`, else the environment's (``StreamKitHome/resolve(override:environment:)``).
    func path(_ context: CommandContext) -> String {
        StreamKitHome.resolve(override: directory, environment: context.environment)
    }
}
