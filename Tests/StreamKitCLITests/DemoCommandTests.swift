import Foundation
import StreamKitCLI
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitTestSupport
import Testing

/// `streamkit demo`: the real binary, its sample from the resource bundle beside it.
@Suite(.requires(.ffprobe)) struct DemoCommandTests {
    private static let steps = [
        "[1/8] Origin", "[2/8] Add it to a fresh download queue", "[3/8] Serve", "[4/8] Fetch the offline copy back",
        "[5/8] Play the stream through the caching proxy", "[6/8] The same stream as DASH", "[7/8] Stop the origin",
        "[8/8] Decode",
    ]

    @Test func theDemoVerifiesEveryStepAndCleansUpInUnder30Seconds() async throws {
        let temporary = try TestRun.makeTemporaryDirectory("demo-tmp")
        let started = ContinuousClock.now
        let demo = try ChildProcess(
            executable: try DownloadBinaryTests.streamkit(), arguments: ["demo"],
            environment: ["TMPDIR": temporary.path],
            logName: "demo")
        #expect(try await demo.wait(timeout: .seconds(60)) == 0, "\(demo.standardError)")
        #expect(started.duration(to: .now) < .seconds(30))
        let output = demo.standardOutput
        for step in Self.steps { #expect(output.contains(step), "\(output)") }
        #expect(output.components(separatedBy: "      ✓ ").count - 1 == 11, "\(output)")
        #expect(output.contains("11 segments, 1 key") && output.contains("byte-identical to the origin"), "\(output)")
        // Through the proxy: both variants and the audio, with the origin and again from the cache alone.
        #expect(
            output.contains("4 playlists, 16 segments, 1 key (885 KB) through /proxy/hls, identical to the origin"),
            "\(output)")
        #expect(
            output.contains("4 playlists, 16 segments, 1 key (885 KB) played again through the proxy from the cache"))
        #expect(output.contains("ffprobe decoded 250 video frames and 432 audio frames"), "\(output)")
        // The DASH copy: the video's 5 segments and the audio's 6, each Representation's init
        // section, from its manifest.mpd, with the origin and again without it. ffmpeg's DASH
        // demuxer decodes 430 of the 432 AAC frames the audio's files hold, from the origin's MPD
        // as from the copy's.
        #expect(
            output.contains("1 MPD, 11 segments, 2 init sections (285 KB) named by manifest.mpd: byte-identical"),
            "\(output)")
        #expect(output.contains("1 MPD, 11 segments, 2 init sections (285 KB) of the DASH copy served again from disk"))
        #expect(
            output.contains("ffprobe decoded 250 video frames and 430 audio frames from the DASH copy's manifest.mpd"),
            "\(output)")
        #expect(output.contains("Try next:"))
        // The queue's task went through its states, its progress on standard error ending at 100%.
        #expect(output.contains("[2/8] Add it to a fresh download queue") && output.contains(" success: "), "\(output)")
        for change in ["preparing → ready", "ready → running", "running → success"] {
            #expect(demo.standardError.contains(change), "\(demo.standardError)")
        }
        #expect(demo.standardError.contains("100.0%  653 KB"), "\(demo.standardError)")
        #expect(demo.standardError.contains("100.0%  285 KB"), "\(demo.standardError)")
        // The temporary library is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty)
    }

    @Test func aHomeKeepsTheLibraryForServe() async throws {
        let home = try TestRun.makeTemporaryDirectory("demo-home")
        let demo = try ChildProcess(
            executable: try DownloadBinaryTests.streamkit(), arguments: ["demo", "--home", home.path], logName: "demo")
        #expect(try await demo.wait(timeout: .seconds(60)) == 0, "\(demo.standardError)")
        let library = home.appendingPathComponent("library")
        let items = try FileManager.default.contentsOfDirectory(atPath: library.path)
        // The HLS package and the DASH one, which has its manifest.mpd beside its index.m3u8.
        #expect(items.count == 2)
        for item in items {
            #expect(FileManager.default.fileExists(atPath: library.appendingPathComponent("\(item)/index.m3u8").path))
        }
        #expect(
            items.filter {
                FileManager.default.fileExists(atPath: library.appendingPathComponent("\($0)/manifest.mpd").path)
            }.count == 1)
        #expect(demo.standardOutput.contains("streamkit serve --home \(home.path)"), "\(demo.standardOutput)")
    }

    /// With `--serve`, the copy stays reachable until Ctrl-C, which ends the demo normally (0).
    @Test func serveKeepsTheCopyUntilCtrlC() async throws {
        let demo = try ChildProcess(
            executable: try DownloadBinaryTests.streamkit(), arguments: ["demo", "--serve"], logName: "demo-serve")
        func url(after prefix: String) -> String? {
            demo.standardOutput.split(separator: "\n").first { $0.hasPrefix(prefix) }
                .flatMap { $0.split(separator: " ").first { $0.hasPrefix("http://") } }
                .map { String($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while url(after: "The cached stream plays at ") == nil && ContinuousClock.now < deadline && demo.isRunning {
            try await Task.sleep(for: .milliseconds(50))
        }
        let playlist = try #require(
            url(after: "Serving the offline copy at "), "\(demo.standardOutput)\n\(demo.standardError)")
        let proxied = try #require(url(after: "The cached stream plays at "), "\(demo.standardOutput)")
        let client = try HTTPClient()
        // The offline copy, and the stream from the cache (the demo's origin is gone by now).
        for url in [playlist, proxied] {
            let (head, body) = try await client.data(for: HTTPClientRequest(url: url))
            #expect(head.status == .ok && String(decoding: body, as: UTF8.self).hasPrefix("#EXTM3U"), "\(url)")
        }
        await client.shutdown()
        demo.signal(SIGINT)
        #expect(try await demo.wait(timeout: .seconds(20)) == 0, "\(demo.standardError)")
    }

    @Test func helpSnapshot() async throws {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: ["demo", "--help"], context: context)
        #expect(code == .success)
        #expect(
            context.output.text == """
                OVERVIEW: Show StreamKit working end to end on this machine, with no network.

                Starts an origin on 127.0.0.1 serving the sample stream that ships with
                StreamKit (a master playlist with a 320x180 variant, a 640x360 AES-128 variant
                and an English audio rendition, ten seconds), adds it to a fresh download queue
                in a temporary folder and runs it with live progress, serves the offline copy,
                fetches its playlists, keys and every segment back through the local server and
                checks them byte for byte against the origin, plays the stream through the
                caching proxy (/proxy/hls) and checks that too, downloads the same video and
                audio as DASH (an MPD) through the queue and checks every file its package's
                manifest.mpd names, stops the origin and fetches them all again (the copies from
                disk, the stream from the cache), and decodes both copies with ffprobe when it
                is installed. Each step prints what it verified; any failure exits 1. With
                --serve it keeps serving the copy and the cached stream until Ctrl-C.

                USAGE: streamkit demo [--serve] [--home <dir>] [--keep]

                OPTIONS:
                  --serve                 Keep serving the offline copy and the cached stream
                                          after the demo, until Ctrl-C.
                  --home <dir>            Where to put the demo's library (default: a new
                                          temporary folder, removed after).
                  --keep                  Keep the temporary folder instead of removing it.
                  -h, --help              Show help information.

                EXAMPLES:
                  Run the demo:
                    streamkit demo
                  Run it, then keep serving the offline copy:
                    streamkit demo --serve

                """)
    }

    /// A binary copied away from its resources says where it looked and what to do (exit 1).
    @Test func aBinaryWithoutItsSampleSaysWhatToDo() async throws {
        let directory = try TestRun.makeTemporaryDirectory("demo-alone")
        let copy = directory.appendingPathComponent("streamkit")
        try BuiltProducts.copyExecutable(from: try DownloadBinaryTests.streamkit(), to: copy.path)
        let demo = try ChildProcess(executable: copy.path, arguments: ["demo"], logName: "demo-alone")
        #expect(try await demo.wait(timeout: .seconds(30)) == 1)
        #expect(
            demo.standardError
                == "error: the demo's sample stream is missing (looked in \(directory.path)/StreamKit_StreamKitCLI.resources/"
                + "DemoSample); run the streamkit built by `swift build`, or set STREAMKIT_DEMO_SAMPLE to "
                + "Sources/StreamKitCLI/DemoSample\n", "\(demo.standardError)")
    }

    @Test func aSampleThatDoesNotVerifyFails() async throws {
        // A copy of the sample missing a segment its playlist lists: the origin answers 404, the
        // download fails naming the file, and the demo exits 1.
        let sample = try TestRun.makeTemporaryDirectory("demo-sample").appendingPathComponent("DemoSample")
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Sources/StreamKitCLI/DemoSample"),
            to: sample)
        try FileManager.default.removeItem(at: sample.appendingPathComponent("high/high_03.ts"))
        let demo = try ChildProcess(
            executable: try DownloadBinaryTests.streamkit(), arguments: ["demo"],
            environment: ["STREAMKIT_DEMO_SAMPLE": sample.path], logName: "demo")
        #expect(try await demo.wait(timeout: .seconds(60)) == 1)
        #expect(demo.standardError.contains("error: the download failed:"), "\(demo.standardError)")
        #expect(demo.standardError.contains("high/high_03.ts"), "\(demo.standardError)")
    }
}
