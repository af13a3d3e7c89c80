/// `--json`: JSON lines on standard output instead of text for people.
struct JSONOutputOptions: ParsableArguments {
    @Flag(help: "Print JSON lines on standard output.") var json = false

    init() {}

    /// `--json` with help saying what this command prints.
    init(help: String) { _json = _json.withHelp(help) }
}
