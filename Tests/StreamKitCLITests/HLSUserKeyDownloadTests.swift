import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `streamkit download --key`, `--key-file` and `--iv`, in-process against nginx whose key URIs
/// answer 403 (a key server that wants a browser session): the download succeeds with no request
/// to a key URI, and the package decodes to the clear source's frames.
@Suite(.serialized, .requires(.nginx, .ffmpeg, .ffprobe)) struct HLSUserKeyDownloadTests {
    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// Frames ffmpeg decodes from a local playlist (keys read from the package's own files).
    private func frames(_ playlist: URL) async throws -> HLSPlayers.FFmpegPlayback {
        try await HLSPlayers.ffmpeg(playlist.path)
    }

    /// Requests nginx answered for key files (`.key`, `.bin`).
    private func keyRequests(_ nginx: Nginx) async throws -> [AccessLogEntry] {
        try await nginx.settledAccessLog().filter { $0.uri.hasSuffix(".key") || $0.uri.hasSuffix(".bin") }
    }

    /// The issue's acceptance: `--key` for a stream whose key URI answers 403, kept encrypted (the
    /// key stored in the package) and with `--decrypt`.
    @Test(arguments: [false, true]) func keyForEveryURIIsNeverFetched(decrypt: Bool) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV))
        let nginx = try await Nginx.static(root: fixture.directory, forbiddenPaths: ["/key.bin"])
        let url = nginx.url(fixture.recipe.entry).absoluteString
        let folder = try TestRun.makeTemporaryDirectory("user-key").appendingPathComponent("p")
        let home = try TestRun.makeTemporaryDirectory("user-key-home")
        let (code, _, error) = await run(
            ["download", url, "--home", home.path, "-o", folder.path, "--key", Hex.encode(Fixtures.key)]
                + (decrypt ? ["--decrypt"] : []))
        #expect(code == .success, "\(error)")
        let asked = try await keyRequests(nginx)
        #expect(asked.isEmpty, "\(asked)")

        let local = try String(contentsOf: folder.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        if decrypt {
            #expect(!local.contains("#EXT-X-KEY"))
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("video/key-0.key").path))
        } else {
            #expect(local.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key-0.key\""))
            #expect(try Data(contentsOf: folder.appendingPathComponent("video/key-0.key")) == Data(Fixtures.key))
        }
        // The clear source: the fixture decoded by ffmpeg from its own folder, its key read from disk.
        let clear = try await frames(fixture.entryFile)
        let ours = try await frames(folder.appendingPathComponent("index.m3u8"))
        #expect(clear.videoFrames > 0 && clear.audioFrames > 0)
        #expect(ours.videoFrames == clear.videoFrames && ours.audioFrames == clear.audioFrames, "\(ours) vs \(clear)")
        #expect(ours.failedRequests.isEmpty)

        // Without the key the same download fails on the 403: the test sees the key server refuse.
        let refused = await run(["download", url, "--home", home.path, "-o", folder.path + "-fetched"])
        #expect(refused.code == .failure)
        #expect(try await keyRequests(nginx).contains { $0.status == 403 })
        await nginx.stop()
    }

    /// An origin whose key rotates: the clear fixture's first segments under `a.key` (IV from the
    /// media sequence number), the others under `keys/b.key` (explicit IV). Both answer 403.
    private func rotatingOrigin(
        keyA: [UInt8], keyB: [UInt8], ivB: [UInt8]
    ) async throws -> (nginx: Nginx, url: String, clear: Fixture) {
        let clear = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let original = try #require(try Playlist.parse(Data(contentsOf: clear.entryFile)).playlist.media)
        let root = try TestRun.makeTemporaryDirectory("rotating-origin")
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:\(original.targetDuration ?? 2)",
            "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-KEY:METHOD=AES-128,URI=\"a.key\"",
        ]
        let half = original.segments.count / 2
        #expect(half >= 1)
        for (number, segment) in original.segments.enumerated() {
            let plain = try Data(contentsOf: clear.directory.appendingPathComponent(segment.uri))
            var key = keyA
            var iv = [UInt8](repeating: 0, count: 15) + [UInt8(number)]
            if number == half {
                lines.append("#EXT-X-KEY:METHOD=AES-128,URI=\"keys/b.key\",IV=0x\(Hex.encode(ivB))")
            }
            if number >= half {
                key = keyB
                iv = ivB
            }
            try Data(try AES128CBC.encrypt(Array(plain), key: key, iv: iv)).write(
                to: root.appendingPathComponent(segment.uri))
            lines += ["#EXTINF:\(segment.duration),", segment.uri]
        }
        try (lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n").write(
            to: root.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let nginx = try await Nginx.static(root: root, forbiddenPaths: ["/a.key", "/keys/b.key"])
        return (nginx, nginx.url("index.m3u8").absoluteString, clear)
    }

    /// `--key-file` twice for a rotating key: one by its absolute URI from a file of raw bytes, one
    /// as the playlist writes it (relative) in hex. Neither is fetched; a third names no key of the
    /// playlist and is a warning.
    @Test(arguments: [false, true]) func keyFilesCoverARotatingKey(decrypt: Bool) async throws {
        let keyA = Hex.decode("00112233445566778899aabbccddeeff")!
        let keyB = Hex.decode("f0e1d2c3b4a5968778695a4b3c2d1e0f")!
        let ivB = Hex.decode("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")!
        let (nginx, url, clear) = try await rotatingOrigin(keyA: keyA, keyB: keyB, ivB: ivB)
        let work = try TestRun.makeTemporaryDirectory("key-files")
        let fileA = work.appendingPathComponent("a.key")
        try Data(keyA).write(to: fileA)
        let folder = work.appendingPathComponent("p")
        let (code, _, error) = await run(
            [
                "download", url, "--home", work.appendingPathComponent("home").path, "-o", folder.path,
                "--key-file", nginx.url("a.key").absoluteString + "=" + fileA.path,
                "--key-file", "keys/b.key=" + Hex.encode(keyB),
                "--key-file", "https://elsewhere.example/c.key=" + Hex.encode(keyB),
            ] + (decrypt ? ["--decrypt"] : []))
        #expect(code == .success, "\(error)")
        #expect(
            error.contains("warning: a key was given for https://elsewhere.example/c.key, which no playlist names"),
            "\(error)")
        let asked = try await keyRequests(nginx)
        #expect(asked.isEmpty, "\(asked)")
        if !decrypt {
            #expect(try Data(contentsOf: folder.appendingPathComponent("video/key-0.key")) == Data(keyA))
            #expect(try Data(contentsOf: folder.appendingPathComponent("video/key-1.key")) == Data(keyB))
        }
        let theirs = try await frames(clear.entryFile)
        let ours = try await frames(folder.appendingPathComponent("index.m3u8"))
        #expect(
            ours.videoFrames == theirs.videoFrames && ours.audioFrames == theirs.audioFrames, "\(ours) vs \(theirs)")
        #expect(ours.failedRequests.isEmpty)
        await nginx.stop()
    }

    /// A wrong key with `--decrypt`: the download fails naming the key as probably wrong.
    @Test func aWrongKeyIsToldWhenSegmentsDoNotDecrypt() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV))
        let nginx = try await Nginx.static(root: fixture.directory, forbiddenPaths: ["/key.bin"])
        let url = nginx.url(fixture.recipe.entry).absoluteString
        let work = try TestRun.makeTemporaryDirectory("wrong-key")
        let (code, _, error) = await run([
            "download", url, "--home", work.appendingPathComponent("home").path, "-o",
            work.appendingPathComponent("p").path, "--key", String(repeating: "5a", count: 16), "--decrypt",
        ])
        #expect(code == .failure)
        #expect(error.contains("decryption failed"), "\(error)")
        #expect(
            error.contains("the key given for \(nginx.url("key.bin").absoluteString) is probably wrong"), "\(error)")
        #expect(try await keyRequests(nginx).isEmpty)
        await nginx.stop()
    }

    /// `--iv` replaces a wrong IV the playlist writes: decrypted, and kept encrypted with the right
    /// IV in the package's playlist.
    @Test(arguments: [false, true]) func ivReplacesAWrongOne(decrypt: Bool) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV))
        let root = try TestRun.makeTemporaryDirectory("wrong-iv-origin")
        for name in try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)
        where name.hasSuffix(".ts") {
            try FileManager.default.copyItem(
                at: fixture.directory.appendingPathComponent(name), to: root.appendingPathComponent(name))
        }
        let playlist = try String(contentsOf: fixture.entryFile, encoding: .utf8).replacingOccurrences(
            of: Hex.encode(Fixtures.explicitIV), with: String(repeating: "ff", count: 16), options: .caseInsensitive)
        #expect(playlist.contains(String(repeating: "ff", count: 16)))
        try playlist.write(to: root.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let nginx = try await Nginx.static(root: root, forbiddenPaths: ["/key.bin"])
        let work = try TestRun.makeTemporaryDirectory("wrong-iv")
        let folder = work.appendingPathComponent("p")
        let (code, _, error) = await run(
            [
                "download", nginx.url("index.m3u8").absoluteString, "--home", work.appendingPathComponent("home").path,
                "-o", folder.path, "--key", Hex.encode(Fixtures.key), "--iv", "0x" + Hex.encode(Fixtures.explicitIV),
            ] + (decrypt ? ["--decrypt"] : []))
        #expect(code == .success, "\(error)")
        // A wrong IV spoils only each segment's first block, which players read past: the bytes
        // tell. Decrypted, each segment is the clear one; kept encrypted, the playlist has the IV.
        let local = try String(contentsOf: folder.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        if decrypt {
            let origin = try #require(try Playlist.parse(Data(contentsOf: fixture.entryFile)).playlist.media)
            let names = local.split(separator: "\n").filter { $0.hasSuffix(".ts") }
            #expect(names.count == origin.segments.count && !names.isEmpty)
            for (segment, name) in zip(origin.segments, names) {
                let clear = try AES128CBC.decrypt(
                    Array(try Data(contentsOf: fixture.directory.appendingPathComponent(segment.uri))),
                    key: Fixtures.key, iv: Fixtures.explicitIV)
                let ours = try Data(contentsOf: folder.appendingPathComponent("video/" + name))
                #expect(Array(ours) == clear, "\(name)")
            }
        } else {
            #expect(local.lowercased().contains("iv=0x" + Hex.encode(Fixtures.explicitIV)), "\(local)")
            #expect(!local.lowercased().contains(String(repeating: "ff", count: 16)))
        }
        let theirs = try await frames(fixture.entryFile)
        let ours = try await frames(folder.appendingPathComponent("index.m3u8"))
        #expect(
            ours.videoFrames == theirs.videoFrames && ours.audioFrames == theirs.audioFrames, "\(ours) vs \(theirs)")
        await nginx.stop()
    }

    /// `queue add --key-file` then `queue run`: the task downloads with the keys and fetches none;
    /// the keys are in the task's secrets file only (never in the queue database), and go with it.
    @Test func queuedTasksKeepTheirKeysAsSecrets() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV))
        let nginx = try await Nginx.static(root: fixture.directory, forbiddenPaths: ["/key.bin"])
        let home = try TestRun.makeTemporaryDirectory("user-key-queue").path
        let hex = Hex.encode(Fixtures.key)
        let (added, addOutput, addError) = await run([
            "queue", "add", nginx.url(fixture.recipe.entry).absoluteString, "--kind", "hls", "--start",
            "--key-file", "key.bin=" + hex, "--iv", Hex.encode(Fixtures.explicitIV), "--home", home,
        ])
        #expect(added == .success, "\(addError)")
        let id = addOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let (ran, _, runError) = await run(["queue", "run", "--exit-when-done", "--home", home])
        #expect(ran == .success, "\(runError)")
        let (listed, list, _) = await run(["queue", "list", "--json", "--home", home])
        #expect(listed == .success && list.contains("\"success\""), "\(list)")
        let asked = try await keyRequests(nginx)
        #expect(asked.isEmpty, "\(asked)")
        let package = URL(fileURLWithPath: home).appendingPathComponent("library/\(id)")
        #expect(try Data(contentsOf: package.appendingPathComponent("video/key-0.key")) == Data(Fixtures.key))

        let database = ["", "-wal", "-shm"].compactMap {
            FileManager.default.contents(atPath: home + "/queue.sqlite" + $0)
        }
        .map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(!database.isEmpty && !database.lowercased().contains(hex.lowercased()))
        let secrets = home + "/secrets/\(id).json"
        let stored = try String(contentsOf: URL(fileURLWithPath: secrets), encoding: .utf8)
        #expect(stored.contains(hex) && stored.contains("key.bin"))
        let mode = try FileManager.default.attributesOfItem(atPath: secrets)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(await run(["queue", "remove", id, "--home", home]).code == .success)
        #expect(!FileManager.default.fileExists(atPath: secrets))
        await nginx.stop()
    }
}
