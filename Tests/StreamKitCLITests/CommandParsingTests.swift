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
        await CommandRunner.runCapturing(SampleRoot.self, arguments: arguments)
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

                USAGE: tool sample <source> [<destination>] [--jobs <jobs>]
                       [--variant <variant>] [--header <header> ...] [--limit-rate <limit-rate>]
                       [--json]

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

/// Options two commands share, declared once.
private struct SharedOptions: ParsableArguments {
    @Option(valueName: "dir", help: "Where data goes.") var home: String?
    @Option(help: "Tries.") var retries = 4
    @Option(help: "Only in some commands.") var codec: String?

    init() {}

    mutating func validate() throws {
        guard retries <= 10 else { throw ValidationError("--retries must be at most 10, got \(retries)") }
    }
}

/// A value parsed in its type, with its own message.
private enum Level: String, CaseIterable, ExpressibleByArgument {
    case low, high

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be low or high, got '\(argument)'"
    }
}

private struct FlagsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flags", abstract: "Combine flags and groups.")

    @Flag(short: "v", help: "Say more.") var verbose = false
    @Flag(short: "q", help: "Say less.") var quiet = false
    @Flag(short: "f", help: "Force.") var force = false
    @Option(short: "n", help: "A count.") var count = 1
    @OptionGroup var shared: SharedOptions
    @Option(help: "A level.") var level = Level.low

    func run(_ context: CommandContext) async throws {
        context.write(
            "\(verbose)|\(quiet)|\(force)|\(count)|\(shared.home ?? "-")|\(shared.retries)|\(shared.codec ?? "-")|\(level)\n"
        )
    }
}

private struct FlagsRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tool", abstract: "A root.", subcommands: [FlagsCommand.self])
}

/// Combined short flags, option groups, and values parsed in their type.
@Suite struct CommandParsingGroupTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(FlagsRoot.self, arguments: ["flags"] + arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    @Test(arguments: [
        (["-vq"], "true|true|false|1|-|4|-|low\n"),
        (["-qvf"], "true|true|true|1|-|4|-|low\n"),
        (["-v", "-q"], "true|true|false|1|-|4|-|low\n"),
        (["-f", "-n3"], "false|false|true|3|-|4|-|low\n"),
        (["--home", "/h", "--retries=7", "--codec", "x"], "false|false|false|1|/h|7|x|low\n"),
        (["--level", "high"], "false|false|false|1|-|4|-|high\n"),
    ])
    func shortFlagsCombineAndGroupsParse(arguments: [String], expected: String) async {
        let (code, output, error) = await run(arguments)
        #expect(code == .success, "\(error)")
        #expect(output == expected)
    }

    @Test(arguments: [
        (["-vn"], "--count takes a value; give it apart from '-vn'"),
        (["-vx"], "unknown option '-x' in '-vx'"),
        (["--retries", "11"], "--retries must be at most 10, got 11"),
        (["--level", "mid"], "--level must be low or high, got 'mid'"),
        (["-v=1"], "--verbose takes no value"),
    ])
    func badCombinationsAndValuesExit64(arguments: [String], message: String) async {
        let (code, _, error) = await run(arguments)
        #expect(code == .usage)
        #expect(error.hasPrefix("error: \(message)\n"), "stderr was: \(error)")
    }

    @Test func groupOptionsShowWhereTheGroupIsDeclared() async {
        let (code, output, _) = await run(["--help"])
        #expect(code == .success)
        #expect(
            output.contains(
                """
                  -n, --count <count>     A count. (default: 1)
                  --home <dir>            Where data goes.
                  --retries <retries>     Tries. (default: 4)
                  --codec <codec>         Only in some commands.
                  --level <level>         A level. (default: low)
                """), "\(output)")
    }

    /// `download` offers `--codec` from the selection group; `queue add`, sharing the group, does not.
    @Test func aGroupMemberLeftOutIsUnknown() async {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(
            StreamKitCommand.self, arguments: ["queue", "add", "http://a.example/x.m3u8", "--codec", "avc1"],
            context: context)
        #expect(code == .usage)
        #expect(context.errorOutput.text.hasPrefix("error: unknown option '--codec'\n"))
    }

    @Test(arguments: [
        (
            ["download", "http://a.example/x", "--audio", "a b"],
            "--audio must be auto, all, none, a language, languages (en,fr), name:NAME or role:ROLE, got 'a b'"
        ),
        (
            ["queue", "add", "http://a.example/x", "--subs", "a b"],
            "--subs must be all, none, a language, languages (en,fr), name:NAME or role:ROLE, got 'a b'"
        ),
        (
            ["queue", "add", "http://a.example/x", "--variant", "huge"],
            "--variant must be best, worst, a bandwidth such as 1500k, or WxH, got 'huge'"
        ),
        (["queue", "add", "http://a.example/x", "--type", "film"], "--type must be video or audio, got 'film'"),
        (["queue", "add", "http://a.example/x", "--kind", "ftp"], "--kind must be auto, hls, dash or file, got 'ftp'"),
        (["queue", "add", "http://a.example/x", "-H", "no colon"], "--header must be 'Name: value', got 'no colon'"),
        (["download", "http://a.example/x", "--retries", "-1"], "--retries must be between 0 and 100, got -1"),
    ])
    func sharedOptionsKeepTheirMessages(arguments: [String], message: String) async {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        #expect(code == .usage)
        #expect(context.errorOutput.text.hasPrefix("error: \(message)\n"), "\(context.errorOutput.text)")
    }
}
