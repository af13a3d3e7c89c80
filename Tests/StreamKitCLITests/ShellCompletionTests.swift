import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

/// `streamkit completions bash|zsh|fish` and `streamkit manpage`: the scripts loaded by the real
/// shells and asked for completions, the task ids of a real queue, and the page rendered by man.
@Suite struct ShellCompletionTests {
    /// Runs `shell -c script` with the built streamkit first on PATH, in a folder of its own
    /// holding the scripts and the page.
    private func run(_ shell: String, _ script: String, in folder: URL) async throws -> (Int32, String, String) {
        let path = try BuiltProducts.executable("streamkit")
        let binDirectory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let process = try ChildProcess(
            executable: shell, arguments: ["-c", script],
            environment: ["PATH": binDirectory + ":/usr/bin:/bin", "MANWIDTH": "80", "HOME": folder.path],
            workingDirectory: folder, logName: "shell-completion")
        let status = try await process.wait(timeout: .seconds(60))
        return (status, process.standardOutput, process.standardError)
    }

    /// Writes what `streamkit arguments` prints to `name` in `folder`.
    private func write(_ arguments: [String], to name: String, in folder: URL) async throws {
        let (code, output, error) = await CommandRunner.runCapturing(arguments: arguments)
        #expect(code == .success, "\(arguments): \(error)")
        try output.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// A home with two queued tasks, and their ids.
    private func queue(in folder: URL) async throws -> (home: String, ids: [String]) {
        let home = folder.appendingPathComponent("home").path
        var ids: [String] = []
        for url in ["http://127.0.0.1:9/show/master.m3u8", "http://127.0.0.1:9/talk.mp4"] {
            let (code, output, error) = await CommandRunner.runCapturing(arguments: [
                "queue", "add", url, "--home", home,
            ])
            #expect(code == .success, "queue add: \(error)")
            ids.append(output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (home, ids)
    }

    @Test func bashCompletesCommandsOptionsValuesFilesAndTaskIDs() async throws {
        let folder = try TestRun.makeTemporaryDirectory("completions-bash")
        try await write(["completions", "bash"], to: "streamkit.bash", in: folder)
        let (home, ids) = try await queue(in: folder)
        try Data().write(to: folder.appendingPathComponent("talk.m3u8"))
        // Each line: the words typed (the last one under the cursor), then what bash offers.
        let script = """
            source ./streamkit.bash
            complete -p streamkit
            offer() {
                COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
                _streamkit
                echo "$*|$(printf '%s\\n' "${COMPREPLY[@]}" | sort | tr '\\n' ' ')"
            }
            offer streamkit qu
            offer streamkit queue st
            offer streamkit download --var
            offer streamkit download -j 8 --variant ''
            offer streamkit download --variant = w
            offer streamkit download --audio ''
            offer streamkit queue add --kind ''
            offer streamkit inspect ta
            offer streamkit queue info --home \(home) ''
            offer streamkit queue start --home = \(home) ''
            offer streamkit completions ''
            compgen -W "$(streamkit queue list --ids --home \(home))" -- ''
            """
        let (status, output, error) = try await run("/bin/bash", script, in: folder)
        #expect(status == 0, "\(error)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first == "complete -F _streamkit streamkit")
        let sortedIDs = ids.sorted().joined(separator: " ") + " "
        let expected = [
            "streamkit qu|queue ",
            "streamkit queue st|start stop ",
            "streamkit download --var|--variant ",
            "streamkit download -j 8 --variant |best worst ",
            "streamkit download --variant = w|worst ",
            "streamkit download --audio |all auto none ",
            "streamkit queue add --kind |auto dash file hls ",
            "streamkit inspect ta|talk.m3u8 ",
            "streamkit queue info --home \(home) |\(sortedIDs)",
            "streamkit queue start --home = \(home) |\(sortedIDs)",
            "streamkit completions |bash fish zsh ",
        ]
        #expect(Array(lines.dropFirst().prefix(expected.count)) == expected)
        #expect(Set(lines.suffix(2)) == Set(ids))
    }

    @Test(.requires(.zsh, .fish)) func zshAndFishReadTheirScriptsAndFishCompletes() async throws {
        let folder = try TestRun.makeTemporaryDirectory("completions-zsh-fish")
        try await write(["completions", "zsh"], to: "_streamkit", in: folder)
        try await write(["completions", "fish"], to: "streamkit.fish", in: folder)
        let zsh = try await run(try Tool.zsh.requirePath(), "zsh -n ./_streamkit", in: folder)
        #expect(zsh.0 == 0, "zsh -n: \(zsh.2)")
        let fishPath = try Tool.fish.requirePath()
        let syntax = try await run(fishPath, "fish -n ./streamkit.fish", in: folder)
        #expect(syntax.0 == 0, "fish -n: \(syntax.2)")
        let (home, ids) = try await queue(in: folder)
        let script = """
            source ./streamkit.fish
            complete -C'streamkit queue st'; echo ---
            complete -C'streamkit download --variant '; echo ---
            complete -C'streamkit queue retry --home \(home) '
            """
        let (status, output, error) = try await run(fishPath, script, in: folder)
        #expect(status == 0, "\(error)")
        let parts = output.components(separatedBy: "---\n").map { part in
            part.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        }
        #expect(parts.count == 3)
        #expect(parts.first == ["start", "stop"])
        #expect(parts.dropFirst().first == ["best", "worst"])
        #expect(Set(parts.last ?? []) == Set(ids))
    }

    @Test(.requires(.man, .groff)) func theManualPageRendersWithEveryCommand() async throws {
        let folder = try TestRun.makeTemporaryDirectory("manpage")
        try await write(["manpage"], to: "streamkit.1", in: folder)
        let (status, output, error) = try await run(
            "/bin/sh", "man -l ./streamkit.1 | col -b && groff -man -ww -z ./streamkit.1", in: folder)
        #expect(status == 0, "\(error)")
        #expect(error.isEmpty, "groff warnings: \(error)")
        // man fills and justifies lines: compare with the white space folded.
        let text = output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("streamkit - Take streaming media offline"))
        for command in ["streamkit download", "streamkit queue add", "streamkit cache list", "streamkit completions"] {
            #expect(text.contains(command), "\(command) missing from the page")
        }
        #expect(text.contains("--variant <variant>"))
        #expect(text.contains("streamkit completions bash > ~/.local/share/bash-completion/completions/streamkit"))
    }
}
