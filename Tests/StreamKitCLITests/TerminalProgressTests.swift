import Foundation
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// The progress line as people see it: the text, its fit to a terminal's width, and the real
/// binary drawing it in place in a real terminal (tmux).
@Suite struct ProgressLineTests {
    private let line = ProgressLine(
        fraction: 0.452, bytes: 12_689_408, totalBytes: 28_101_836, totalIsEstimate: true, bytesPerSecond: 3_355_443,
        secondsRemaining: 4.6, files: .init(done: 12, total: 40))

    @Test func aLogLineHasEveryFieldAndNoBar() {
        #expect(line.text() == "45.2%  12/40 files  12.1 MB / ~26.8 MB  3.20 MB/s  ETA 0:05")
    }

    @Test func aTerminalLineHasABarAndFitsItsWidth() {
        for width in [200, 120, 80, 60, 40, 30, 20, 8] {
            let text = line.text(width: width)
            #expect(text.count <= max(width - 1, 10), "\(width): \(text)")
            #expect(text.contains("45.2%"), "\(width): \(text)")
        }
        let wide = line.text(width: 80)
        #expect(wide == "[#######---------]  45.2%  12/40 files  12.1 MB / ~26.8 MB  3.20 MB/s  ETA 0:05", "\(wide)")
        #expect(line.text(width: 120).hasPrefix("[#############-----------------]  45.2%"))
        // Narrow: the bar goes first, then the least useful fields.
        #expect(line.text(width: 40) == "45.2%  12/40 files  12.1 MB / ~26.8 MB")
    }

    @Test func longETAsAndLabels() {
        let labelled = ProgressLine(
            label: "show", fraction: 1, bytes: 1_024, totalBytes: 1_024, secondsRemaining: 3_725)
        #expect(labelled.text() == "show  100.0%  1.00 KB / 1.00 KB  ETA 1h02m")
    }

    @Test func aLogShowsAtMostALineAnIntervalAndTheLastStateOnce() {
        let sink = OutputSink.memory()
        let display = ProgressDisplay(sink: sink, logInterval: .seconds(60))
        #expect(!display.isInteractive)
        display.update([ProgressLine(fraction: 0.1, bytes: 10, totalBytes: 100)])
        display.update([ProgressLine(fraction: 0.5, bytes: 50, totalBytes: 100)])
        display.message("warning: something\n")
        display.update([ProgressLine(fraction: 1, bytes: 100, totalBytes: 100)])
        display.finish()
        display.finish()
        #expect(sink.text == "10.0%  10 B / 100 B\nwarning: something\n100.0%  100 B / 100 B\n")
    }
}

@Suite(.requires(.tmux, .nginx, .ffmpeg)) struct TerminalProgressTests {
    /// `streamkit download` in an 80-column tmux pane: the progress line is redrawn in place
    /// (never two at once, never wider than the pane), it changes as files arrive, and the pane
    /// ends with the summary.
    @Test func downloadRedrawsItsProgressLineInPlaceIn80Columns() async throws {
        let fixture = try await Fixtures.shared.fixture(
            FixtureRecipe(.hlsTS, seconds: 24, segmentSeconds: 1, videoBitrate: "300k"))
        // About 40 KB segments at 16 KB/s a connection: the download lasts a few seconds.
        let nginx = try await Nginx.static(root: fixture.directory, limitRatePerConnection: 16_000)
        let directory = try TestRun.makeTemporaryDirectory("tmux")
        let socket = directory.appendingPathComponent("tmux.sock").path
        let command = [
            try DownloadBinaryTests.streamkit(), "download", nginx.url("index.m3u8").absoluteString, "-o",
            directory.appendingPathComponent("package").path, "--home", directory.appendingPathComponent("home").path,
        ].map { "'\($0)'" }.joined(separator: " ")
        try await Tool.tmux.run([
            "-S", socket, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "progress",
            "env TERM=xterm-256color \(command); echo EXIT=$?; sleep 120",
        ])
        var captures: [[String]] = []
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            let pane = try await Tool.tmux.run(["-S", socket, "capture-pane", "-p", "-t", "progress"])
            let lines = pane.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            captures.append(lines)
            if lines.contains(where: { $0.hasPrefix("EXIT=") }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        _ = try? await Tool.tmux.run(["-S", socket, "kill-server"], allowFailure: true)
        await nginx.stop()

        let last = try #require(captures.last)
        #expect(last.contains("EXIT=0"), "\(last.joined(separator: "\n"))")
        #expect(last.contains { $0.hasPrefix("Saved ") }, "\(last.joined(separator: "\n"))")
        let progressLines = captures.map { $0.filter { $0.contains(" files ") && $0.contains("%") } }
        // In place: one progress line at a time in every capture, never wider than the pane.
        #expect(progressLines.allSatisfy { $0.count <= 1 }, "\(progressLines.filter { $0.count > 1 })")
        #expect(captures.joined().allSatisfy { $0.count <= 80 })
        // It moved: several different states, with a bar, ending at every file.
        let states = Set(progressLines.joined())
        #expect(states.count >= 3, "\(states)")
        #expect(states.allSatisfy { $0.hasPrefix("[") }, "\(states)")
        let files = try #require(last.first { $0.contains(" files ") })
        #expect(files.contains("100.0%") && files.contains("/"), "\(files)")
    }
}
