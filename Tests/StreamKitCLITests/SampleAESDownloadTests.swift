import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `streamkit download --decrypt` of SAMPLE-AES streams served by nginx (MPEG-TS with H.264 and
/// AAC, and with AC-3; fragmented MP4 `cbcs`): the package's segments are clear, its playlists
/// name no key, its key files are gone, and it decodes to the clear source's frames.
@Suite(.serialized, .requires(.nginx, .ffmpeg)) struct SampleAESDownloadTests {
    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// The checksum of every decoded frame of every stream of `input`.
    private func frames(_ input: URL) async throws -> [String] {
        let output = try await Tool.ffmpeg.run([
            "-nostdin", "-v", "error", "-allowed_extensions", "ALL", "-i", input.path, "-map", "0", "-f", "framemd5",
            "-",
        ])
        return output.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// The package's files with `suffix`.
    private func files(in folder: URL, suffix: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(suffix) { found.append(path) }
        }
        return found
    }

    @Test(arguments: SampleAESFixture.Audio.allCases)
    func decryptStoresClearSegments(audio: SampleAESFixture.Audio) async throws {
        let fixture = try await SampleAESFixtures.shared.fixture(audio)
        let nginx = try await Nginx.static(root: fixture.directory)
        let url = nginx.url("index.m3u8").absoluteString
        let work = try TestRun.makeTemporaryDirectory("sample-aes-download-\(audio)")
        let home = work.appendingPathComponent("home").path

        let folder = work.appendingPathComponent("clear")
        let (code, _, error) = await run(["download", url, "--home", home, "-o", folder.path, "--decrypt"])
        #expect(code == .success, "\(error)")
        let playlist = try String(contentsOf: folder.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(!playlist.contains("#EXT-X-KEY"), "\(playlist)")
        #expect(files(in: folder, suffix: ".key").isEmpty)
        let clear = try await frames(fixture.clearPlaylist)
        #expect(clear.count > 200)
        #expect(try await frames(folder.appendingPathComponent("index.m3u8")) == clear)

        // Without --decrypt the segments stay as served, under their key.
        let kept = work.appendingPathComponent("kept")
        let asIs = await run(["download", url, "--home", home, "-o", kept.path])
        #expect(asIs.code == .success, "\(asIs.error)")
        let keptPlaylist = try String(contentsOf: kept.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(keptPlaylist.contains("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"key-0.key\""), "\(keptPlaylist)")
        let first = try #require(files(in: kept, suffix: ".ts").sorted().first)
        #expect(
            try Data(contentsOf: kept.appendingPathComponent(first))
                == Data(contentsOf: fixture.directory.appendingPathComponent("seg000.ts")))
        await nginx.stop()
    }

    /// A wrong key given with `--key`: AC-3 frames fail their CRC once decrypted, and the download
    /// fails saying the key is probably wrong. (H.264 and AAC have no check: a wrong key there gives
    /// a package that decodes to broken pictures and sound.)
    @Test func aWrongKeyFailsOnAC3Frames() async throws {
        let fixture = try await SampleAESFixtures.shared.fixture(.ac3)
        let nginx = try await Nginx.static(root: fixture.directory, forbiddenPaths: ["/key.bin"])
        let work = try TestRun.makeTemporaryDirectory("sample-aes-wrong-key")
        let wrong = Hex.encode(SampleAESFixtures.key.reversed())
        let (code, _, error) = await run([
            "download", nginx.url("index.m3u8").absoluteString, "--home", work.appendingPathComponent("home").path,
            "-o", work.appendingPathComponent("p").path, "--decrypt", "--key", wrong,
        ])
        #expect(code == .failure)
        #expect(error.contains("decryption failed") && error.contains("CRC"), "\(error)")
        #expect(error.contains("probably wrong"), "\(error)")
        await nginx.stop()
    }

    /// The checksum of every packet of every stream of `input`, as stored (`-c copy`).
    private func packets(_ input: URL) async throws -> [String] {
        let output = try await Tool.ffmpeg.run([
            "-nostdin", "-v", "error", "-allowed_extensions", "ALL", "-i", input.path, "-map", "0", "-c", "copy", "-f",
            "framemd5", "-",
        ])
        return output.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// SAMPLE-AES in fragmented MP4 (`cbcs`, H.264 with AAC): `--decrypt` stores the init segment
    /// with clear sample entries and the segments with clear samples, under playlists that name no
    /// key; its packets are the clear source's, and it decodes. Without `--decrypt` the files stay as
    /// served, under their key.
    @Test func decryptStoresClearFragmentedMP4() async throws {
        let fixture = try await SampleAESMP4Fixture.make()
        let nginx = try await Nginx.static(root: fixture.directory)
        let url = nginx.url("index.m3u8").absoluteString
        let work = try TestRun.makeTemporaryDirectory("sample-aes-fmp4-download")
        let home = work.appendingPathComponent("home").path

        let folder = work.appendingPathComponent("clear")
        let (code, _, error) = await run(["download", url, "--home", home, "-o", folder.path, "--decrypt"])
        #expect(code == .success, "\(error)")
        let playlist = try String(contentsOf: folder.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(!playlist.contains("#EXT-X-KEY") && playlist.contains("#EXT-X-MAP"), "\(playlist)")
        #expect(files(in: folder, suffix: ".key").isEmpty)
        let clear = try await packets(fixture.directory.appendingPathComponent("clear.m3u8"))
        #expect(clear.count > 100)
        #expect(try await packets(folder.appendingPathComponent("index.m3u8")) == clear)
        #expect(try await frames(folder.appendingPathComponent("index.m3u8")).count > 100)

        let kept = work.appendingPathComponent("kept")
        let asIs = await run(["download", url, "--home", home, "-o", kept.path])
        #expect(asIs.code == .success, "\(asIs.error)")
        let keptPlaylist = try String(contentsOf: kept.appendingPathComponent("video/index.m3u8"), encoding: .utf8)
        #expect(keptPlaylist.contains("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"key-0.key\""), "\(keptPlaylist)")
        let first = try #require(files(in: kept, suffix: ".m4s").sorted().first)
        #expect(
            try Data(contentsOf: kept.appendingPathComponent(first))
                == Data(contentsOf: fixture.directory.appendingPathComponent(fixture.segments[0])))
        await nginx.stop()
    }

    /// A cbcs init that declares another scheme (`cenc`, AES-CTR) is refused by name.
    @Test func otherCommonEncryptionSchemesAreRefused() async throws {
        let fixture = try await SampleAESMP4Fixture.make(seconds: 2)
        let initURL = fixture.directory.appendingPathComponent("init.mp4")
        var bytes = Array(try Data(contentsOf: initURL))
        let schm = Array("schm".utf8)
        for index in 0..<(bytes.count - 12) where Array(bytes[index..<index + 4]) == schm {
            bytes.replaceSubrange(index + 8..<index + 12, with: Array("cenc".utf8))
        }
        try Data(bytes).write(to: initURL)
        let nginx = try await Nginx.static(root: fixture.directory)
        let work = try TestRun.makeTemporaryDirectory("sample-aes-fmp4-cenc")
        let (code, _, error) = await run([
            "download", nginx.url("index.m3u8").absoluteString, "--home", work.appendingPathComponent("home").path,
            "-o", work.appendingPathComponent("p").path, "--decrypt",
        ])
        #expect(code == .failure)
        #expect(error.contains("unsupported encryption") && error.contains("'cenc'"), "\(error)")
        await nginx.stop()
    }
}
