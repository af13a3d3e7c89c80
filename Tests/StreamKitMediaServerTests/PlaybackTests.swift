import Foundation
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

/// Real players through the server: ffprobe and ffmpeg decode every frame of HLS fixtures, and
/// the result must equal decoding the files directly.
@Suite struct PlaybackTests {
    /// Copies the fixture into a library as item `id`.
    private func library(with fixture: Fixture, id: String) throws -> LibraryServer {
        try LibraryServer.start { root in
            try FileManager.default.copyItem(at: fixture.directory, to: root.appendingPathComponent(id))
        }
    }

    /// `index,type,frames` per stream, every frame decoded.
    private func frameCounts(_ input: String) async throws -> [String] {
        let output = try await Tool.ffprobe.run([
            "-v", "error", "-allowed_extensions", "ALL", "-count_frames", "-show_entries",
            "stream=index,codec_type,nb_read_frames", "-of", "csv=p=0", input,
        ])
        return output.standardOutput.split(separator: "\n").map(String.init)
    }

    /// The checksum of every decoded frame of every stream.
    private func frameChecksums(_ input: String) async throws -> [String] {
        let output = try await Tool.ffmpeg.run([
            "-nostdin", "-v", "error", "-allowed_extensions", "ALL", "-i", input, "-map", "0", "-f", "framemd5", "-",
        ])
        return output.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    @Test(
        .requires(.ffmpeg, .ffprobe),
        arguments: [FixtureRecipe.Kind.hlsTS, .hlsFMP4, .hlsAES128ExplicitIV])
    func playersDecodeEveryFrameThroughTheServer(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let library = try library(with: fixture, id: "item-\(kind.rawValue)")
        let url = "http://127.0.0.1:\(library.port)/library/item-\(kind.rawValue)/index.m3u8"

        let direct = try await frameCounts(fixture.entryFile.path)
        let served = try await frameCounts(url)
        // ffprobe lists the streams, and HLS's program lists them again.
        #expect(
            Set(direct.compactMap { $0.split(separator: ",").dropFirst().first }) == ["video", "audio"], "\(direct)")
        #expect(direct.allSatisfy { Int($0.split(separator: ",").last ?? "") ?? 0 > 0 })
        #expect(served == direct)

        let directFrames = try await frameChecksums(fixture.entryFile.path)
        let servedFrames = try await frameChecksums(url)
        #expect(directFrames.count > 250)
        #expect(servedFrames == directFrames)
        await library.stop()
    }

    @Test(.requires(.ffprobe)) func aKeyIsServedFromTheLibraryNotTheNetwork() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV))
        let library = try library(with: fixture, id: "secure")
        let playlist = try await library.get("/library/secure/index.m3u8")
        #expect(playlist.text.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key.bin\""))
        let key = try await library.get("/library/secure/key.bin")
        #expect(key.status == 200 && key.body == Fixtures.key)
        await library.stop()
    }
}
