import StreamKitCLI
import Testing

/// A command exercising every kind of declaration, parsed in-process.
private struct SampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample", abstract: "Exercise the parser.",
        examples: [.init("Download with 4 connections", "streamkit sample URL -j 4")])

    enum Quality: String, ExpressibleByArgument, CaseIterable { case best, worst }

    @Argument(help: "The source.") var source: String
    @Argument(help: "Where to write.") var destination: String?
    @Option(name: "jobs", short: "j", help: "Connections.") var jobs = 8
    @Option(help: "Which variant.") var variant: Quality?
    @Option(name: "header", short: "H", help: "Extra header.") var headers: [String] = []
    @Option(help: "Rate.") var limitRate: Double?
    @Flag(help: "Print JSON.") var json = false

    mutating func validate() throws {
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 64, got \(jobs)") }
    }

    func run(_ context: CommandContext) async throws {
        context.write(
            "\(source)|\(destination ?? "-")|\(jobs)|\(variant?.rawValue ?? "-")|\(headers)|\(limitRate ?? -1)|\(json)\n"
        )
        if source == "fail" { throw ExitCode.finishedWithGaps }
        if source == "error" { throw SampleError() }
    }
}

private struct SampleError: Error, CustomStringConvertible {
    var description: String { "the sample failed at http://x/y (HTTP 404)" }
}

private struct SampleRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tool", abstract: "A root.", subcommands: [SampleCommand.self], version: "tool 1.0")
}

@Suite struct CommandParsingTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(SampleRoot.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    @Test func everyKindOfArgumentParses() async {
        let (code, output, error) = await run([
            "sample", "http://a", "out", "-j", "4", "--variant=worst", "-H", "A: 1", "--header", "B: 2", "--limit-rate",
            "2.5",
            "--json",
        ])
        #expect(code == .success && error.isEmpty)
        #expect(output == "http://a|out|4|worst|[\"A: 1\", \"B: 2\"]|2.5|true\n")
    }

    @Test func defaultsApplyWhenLeftOut() async {
        let (code, output, _) = await run(["sample", "http://a"])
        #expect(code == .success)
        #expect(output == "http://a|-|8|-|[]|-1.0|false\n")
    }

    @Test func shortOptionsTakeAttachedValuesAndDoubleDashEndsOptions() async {
        let (code, output, _) = await run(["sample", "-j16", "--", "--not-an-option"])
        #expect(code == .success)
        #expect(output.hasPrefix("--not-an-option|-|16|"))
    }

    @Test(arguments: [
        (["sample"], "missing argument <source>"),
        (["sample", "x", "--bogus"], "unknown option '--bogus'"),
        (["sample", "x", "-j", "many"], "invalid value 'many' for --jobs: expected an integer"),
        (["sample", "x", "--variant", "medium"], "invalid value 'medium' for --variant: expected one of best, worst"),
        (["sample", "x", "-j"], "missing value for --jobs"),
        (["sample", "x", "-j", "2", "-j", "3"], "--jobs given more than once"),
        (["sample", "x", "y", "z"], "unexpected argument 'z'"),
        (["sample", "x", "--json=yes"], "--json takes no value"),
        (["sample", "x", "-j", "99"], "--jobs must be between 1 and 64, got 99"),
        (["nope"], "unknown command 'nope'"),
        (["help", "nope"], "unknown command 'nope'"),
    ])
    func usageErrorsExit64NamingTheArgument(arguments: [String], message: String) async {
        let (code, output, error) = await run(arguments)
        #expect(code == .usage)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("error: \(message)\n"), "stderr was: \(error)")
        #expect(error.contains("usage: tool"))
    }

    @Test func thrownExitCodesAndErrorsBecomeTheProcessStatus() async {
        let (gaps, _, _) = await run(["sample", "fail"])
        #expect(gaps == .finishedWithGaps)
        let (failure, _, error) = await run(["sample", "error"])
        #expect(failure == .failure)
        #expect(error == "error: the sample failed at http://x/y (HTTP 404)\n")
    }

    @Test func helpAndVersion() async {
        let (code, output, _) = await run(["sample", "--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Exercise the parser.

                USAGE: tool sample <source> [<destination>] [--jobs <jobs>] [--variant <variant>] [--header <header> ...] [--limit-rate <limit-rate>] [--json]

                ARGUMENTS:
                  <source>                The source.
                  <destination>           Where to write.

                OPTIONS:
                  -j, --jobs <jobs>       Connections. (default: 8)
                  --variant <variant>     Which variant.
                  -H, --header <header>   Extra header.
                  --limit-rate <limit-rate>
                                          Rate.
                  --json                  Print JSON.
                  -h, --help              Show help information.

                EXAMPLES:
                  Download with 4 connections:
                    streamkit sample URL -j 4

                """)
        let (_, viaHelp, _) = await run(["help", "sample"])
        #expect(viaHelp == output)
        let (versionCode, version, _) = await run(["--version"])
        #expect(versionCode == .success && version == "tool 1.0\n")
        let (_, rootHelp, _) = await run([])
        #expect(rootHelp.contains("COMMANDS:\n  sample                  Exercise the parser.\n"))
    }
}
