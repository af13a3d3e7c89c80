import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `streamkit download` with HLS, in-process against nginx: the library location, resuming the same
/// package, JSON lines, exit codes, detection.
@Suite(.serialized, .requires(.nginx, .ffmpeg)) struct HLSDownloadCommandTests {
    private func run(
        _ arguments: [String], environment: [String: String] = [:]
    ) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing(environment: environment)
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    private func origin(_ kind: FixtureRecipe.Kind = .hlsTS) async throws -> (Fixture, Nginx) {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        return (fixture, try await Nginx.static(root: fixture.directory))
    }

    @Test func downloadsIntoTheLibraryAndTheSameCommandResumesThePackage() async throws {
        let (fixture, nginx) = try await origin()
        let home = try TestRun.makeTemporaryDirectory("home")
        let url = nginx.url("index.m3u8").absoluteString
        let id = HLSDownloadJob.packageID(
            source: url, selection: HLSSelection(), decrypt: false, salt: try DownloadManager.idSalt(directory: home))
        let package = home.appendingPathComponent("library/\(id)")
        let (code, output, error) = await run(["download", url, "--home", home.path])
        #expect(code == .success, "\(error)")
        #expect(output.hasPrefix("Saved \(package.path) (5 files, "), "\(output)")
        #expect(
            output.contains(
                "Play it offline: run `streamkit serve`, then open http://127.0.0.1:12345/library/\(id)/index.m3u8"))
        #expect(error.hasPrefix("Downloading \(url)\n  into \(package.path)\n  video: 5 segments, 10.0 s\n"))
        #expect(error.contains("5/5 files"), "\(error)")
        for name in ["seg000.ts", "seg004.ts"] {
            let local = package.appendingPathComponent("video/0000\(name.dropFirst(5).prefix(1)).ts")
            #expect(try Data(contentsOf: local) == Data(contentsOf: fixture.directory.appendingPathComponent(name)))
        }
        let requests = try await nginx.settledAccessLog().count
        let (again, secondOutput, secondError) = await run(["download", url, "--home", home.path])
        #expect(again == .success)
        #expect(secondOutput.contains("5 already in place"), "\(secondOutput)")
        #expect(secondError.contains("resuming: 5 of 5 files already in place"))
        #expect(try await nginx.settledAccessLog().count == requests, "a complete package needs no request")

        // STREAMKIT_HOME, then XDG_DATA_HOME, then HOME decide where the library is; each home names
        // the package with its own salt.
        func packageID(home: URL) throws -> String {
            HLSDownloadJob.packageID(
                source: url, selection: HLSSelection(), decrypt: false,
                salt: try DownloadManager.idSalt(directory: home))
        }
        let xdg = try TestRun.makeTemporaryDirectory("xdg")
        #expect(await run(["download", url], environment: ["XDG_DATA_HOME": xdg.path]).code == .success)
        let xdgHome = xdg.appendingPathComponent("streamkit")
        let xdgID = try packageID(home: xdgHome)
        #expect(xdgID != id)
        #expect(
            FileManager.default.fileExists(atPath: xdgHome.appendingPathComponent("library/\(xdgID)/index.m3u8").path))
        let explicit = try TestRun.makeTemporaryDirectory("explicit")
        #expect(
            await run(["download", url], environment: ["STREAMKIT_HOME": explicit.path, "XDG_DATA_HOME": xdg.path]).code
                == .success)
        #expect(
            FileManager.default.fileExists(
                atPath: explicit.appendingPathComponent("library/\(try packageID(home: explicit))/index.m3u8").path))
        await nginx.stop()
    }

    @Test func outputPutsThePackageInAFolderAndJSONLinesGoToStandardOutput() async throws {
        let (_, nginx) = try await origin(.hlsFMP4)
        let folder = try TestRun.makeTemporaryDirectory("out").appendingPathComponent("talk")
        let url = nginx.url("index.m3u8").absoluteString
        let (code, output, error) = await run(["download", url, "-o", folder.path, "--json", "-j", "2"])
        #expect(code == .success)
        #expect(error.isEmpty, "\(error)")
        let objects = try output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.first?["event"] as? String == "planned" && objects.first?["files"] as? Int == 6)
        #expect(objects.dropFirst().dropLast().allSatisfy { $0["event"] as? String == "progress" })
        let progress = try #require(objects.dropLast().last)
        #expect(progress["files"] as? Int == 6 && progress["filesTotal"] as? Int == 6)
        #expect(progress["estimatedBytes"] as? Int == progress["bytes"] as? Int)
        let result = try #require(objects.last)
        #expect(result["event"] as? String == "result" && result["status"] as? String == "completed")
        #expect(result["path"] as? String == folder.path && result["files"] as? Int == 6)
        #expect(result["index"] as? String == folder.appendingPathComponent("index.m3u8").path)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("video/init-0.mp4").path))
        await nginx.stop()
    }

    @Test func exitCodesFollowTheContract() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let root = try TestRun.makeTemporaryDirectory("broken-origin")
        for file in try fixture.files() where file != "seg003.ts" {
            try FileManager.default.copyItem(
                at: fixture.directory.appendingPathComponent(file), to: root.appendingPathComponent(file))
        }
        let nginx = try await Nginx.static(root: root)
        let url = nginx.url("index.m3u8").absoluteString
        let segment = nginx.url("seg003.ts").absoluteString
        let home = try TestRun.makeTemporaryDirectory("home")

        let (failed, output, error) = await run(["download", url, "--home", home.path, "--retries", "0"])
        #expect(failed == .failure && output.isEmpty)
        #expect(error.contains("error: file failed for \(segment) (HTTP 404)"), "\(error)")
        #expect(error.contains("run the same command to resume"))
        let (_, json, _) = await run(["download", url, "--home", home.path, "--retries", "0", "--json"])
        let failure = try #require(
            try JSONSerialization.jsonObject(with: Data(json.split(separator: "\n").last!.utf8)) as? [String: Any])
        #expect(failure["status"] as? String == "failed" && failure["httpStatus"] as? Int == 404)
        #expect(failure["url"] as? String == segment && failure["file"] as? String == "video/00003.ts")

        let (gaps, gapOutput, gapError) = await run([
            "download", url, "--home", home.path, "--skip-broken", "--retries", "0",
        ])
        #expect(gaps == .finishedWithGaps)
        #expect(gapError.contains("warning: skipped video/00003.ts"), "\(gapError)")
        #expect(gapOutput.contains("1 skipped as gaps"), "\(gapOutput)")

        let (usage, _, usageError) = await run(["download", url, "-j", "65"])
        #expect(usage == .usage && usageError.hasPrefix("error: --connections must be between 1 and 64, got 65"))
        await nginx.stop()
    }

    @Test func aMasterWithoutTheAskedLanguageFailsNamingWhatThereIs() async throws {
        let (_, nginx) = try await origin(.hlsMaster)
        let home = try TestRun.makeTemporaryDirectory("home")
        let (code, _, error) = await run([
            "download", nginx.url("master.m3u8").absoluteString, "--home", home.path, "--audio", "de",
        ])
        #expect(code == .failure)
        #expect(error.contains("--audio de matches none of: eng (English), fra (French)"), "\(error)")
        // The fixture's variants are all H.264: an HEVC filter matches none, and says what there is.
        let (codecCode, _, codecError) = await run([
            "download", nginx.url("master.m3u8").absoluteString, "--home", home.path, "--codec", "hvc1,hev1",
        ])
        #expect(codecCode == .failure)
        #expect(codecError.contains("with codec hvc1 or hev1") && codecError.contains("avc1."), "\(codecError)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("library").path).isEmpty)
        await nginx.stop()
    }

    /// HLS is recognized by its body or its Content-Type when the URL does not say; anything else
    /// is downloaded as a file.
    @Test func hlsIsDetectedByBodyOrContentType() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let root = try TestRun.makeTemporaryDirectory("detect")
        for file in try fixture.files() {
            try FileManager.default.copyItem(
                at: fixture.directory.appendingPathComponent(file), to: root.appendingPathComponent(file))
        }
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("index.m3u8"), to: root.appendingPathComponent("stream"))
        try Data("not a playlist".utf8).write(to: root.appendingPathComponent("notes"))
        let nginx = try await Nginx.static(root: root)
        let out = try TestRun.makeTemporaryDirectory("detect-out")
        let (code, output, _) = await run([
            "download", nginx.url("stream").absoluteString, "-o", out.appendingPathComponent("pkg").path,
        ])
        #expect(code == .success && output.contains("(5 files, "), "\(output)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("pkg/video/00004.ts").path))
        let (file, _, _) = await run([
            "download", nginx.url("notes").absoluteString, "-o", out.appendingPathComponent("notes").path,
        ])
        #expect(file == .success)
        #expect(try Data(contentsOf: out.appendingPathComponent("notes")) == Data("not a playlist".utf8))

        // A playlist Content-Type with a comment before #EXTM3U: the type decides.
        let playlist = try String(contentsOf: fixture.entryFile, encoding: .utf8)
            .replacingOccurrences(of: "seg", with: nginx.url("seg").absoluteString)
        let body = Array(("# served by a script\n" + playlist).utf8)
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200,
                    headers: [
                        ("Content-Type", "application/vnd.apple.mpegurl; charset=utf-8"),
                        ("Content-Length", "\(body.count)"),
                        ("Connection", "close"),
                    ], body: body)),
            .close,
        ])
        let (typed, typedOutput, typedError) = await run([
            "download", responder.url("play").absoluteString, "-o", out.appendingPathComponent("typed").path,
        ])
        #expect(typed == .success, "\(typedError)")
        #expect(typedOutput.contains("(5 files, "))
        await responder.stop()
        await nginx.stop()
    }
}
