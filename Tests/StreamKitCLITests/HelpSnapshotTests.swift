import Foundation
import StreamKitCLI
import Testing

/// Every command's `--help`, found by walking the command tree, against a snapshot in
/// `HelpSnapshots/` (a new command without one fails). To accept changed help after reading it:
/// `STREAMKIT_UPDATE_SNAPSHOTS=1 swift test --filter HelpSnapshotTests`, then review the diff.
@Suite struct HelpSnapshotTests {
    /// Every command path below the root: `["download"]`, `["rtmp"]`, `["rtmp", "record"]`...
    static func commandPaths(
        _ command: any ParsableCommand.Type = StreamKitCommand.self, prefix: [String] = []
    ) -> [[String]] {
        command.configuration.subcommands.flatMap { subcommand -> [[String]] in
            let path = prefix + [subcommand.configuration.commandName]
            return [path] + commandPaths(subcommand, prefix: path)
        }
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("HelpSnapshots")

    @Test func theTreeHasEveryCommand() {
        let paths = Self.commandPaths().map { $0.joined(separator: " ") }
        for expected in ["demo", "download", "export", "serve", "inspect", "rtmp", "rtmp record", "rtmp publish"] {
            #expect(paths.contains(expected), "\(paths)")
        }
    }

    @Test(arguments: [[]] + commandPaths())
    func helpMatchesItsSnapshot(_ path: [String]) async throws {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: path + ["--help"], context: context)
        #expect(code == .success)
        let help = context.output.text
        #expect(help.contains("USAGE: streamkit"), "\(help)")
        #expect(help.contains("EXAMPLES:") || help.contains("SUBCOMMANDS:"), "no example: \(path)")
        let file = Self.directory.appendingPathComponent((["streamkit"] + path).joined(separator: "-") + ".txt")
        if ProcessInfo.processInfo.environment["STREAMKIT_UPDATE_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try help.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let snapshot = try #require(
            try? String(contentsOf: file, encoding: .utf8), "no snapshot \(file.lastPathComponent) for \(path)")
        #expect(help == snapshot, "help of \(path) changed; see HelpSnapshotTests' documentation")
    }

    @Test(arguments: [[]] + commandPaths())
    func noHelpLineExceeds80ColumnsWhenNotATerminal(_ path: [String]) async {
        let context = CommandContext.capturing(environment: ["COLUMNS": "200"])
        #expect(
            await CommandRunner.run(StreamKitCommand.self, arguments: path + ["--help"], context: context) == .success)
        #expect(!context.output.isTerminal)
        for line in context.output.text.split(separator: "\n") {
            #expect(line.count <= HelpFormatter.defaultWidth, "\(path): \(line)")
        }
    }
}
