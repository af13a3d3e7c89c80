import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@Suite struct FixtureTests {
    /// Every recipe makes something ffprobe reads over http://127.0.0.1 with video and audio.
    @Test(.requires(.nginx, .ffmpeg, .ffprobe, .openssl), arguments: FixtureRecipe.Kind.allCases)
    func ffprobeReadsEveryRecipeOverHTTP(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let nginx = try await Nginx.static(root: fixture.directory)
        let probe = try await Tool.ffprobe.run([
            "-v", "error", "-show_entries", "stream=codec_type:format=duration", "-of", "json",
            nginx.url(fixture.recipe.entry).absoluteString,
        ])
        struct Probe: Decodable {
            struct Stream: Decodable {
                let codecType: String
                enum CodingKeys: String, CodingKey { case codecType = "codec_type" }
            }
            struct Format: Decodable { let duration: String }
            let streams: [Stream]
            let format: Format
        }
        let parsed = try JSONDecoder().decode(Probe.self, from: Data(probe.standardOutput.utf8))
        let types = parsed.streams.map(\.codecType)
        #expect(types.contains("video") && types.contains("audio"), "\(kind): \(types)")
        let duration = try #require(Double(parsed.format.duration))
        #expect(abs(duration - 10) < 1.0, "\(kind) lasts \(duration) s")
        if kind == .hlsMaster {
            #expect(types.filter { $0 == "video" }.count == 3)
            #expect(types.filter { $0 == "audio" }.count >= 2)
            // ffmpeg's HLS demuxer skips subtitle renditions; the master names them and ffprobe reads them.
            let master = try String(contentsOf: fixture.entryFile, encoding: .utf8)
            #expect(master.contains("TYPE=SUBTITLES") && master.contains("SUBTITLES=\"subs\""))
            let subtitles = try await Tool.ffprobe.run([
                "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
                nginx.url("subs_eng/index.m3u8").absoluteString,
            ])
            #expect(
                Set(subtitles.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
                    == ["webvtt"])
        }
        // Nothing ffprobe fetched failed.
        let failed = try await nginx.settledAccessLog().filter { ![200, 206].contains($0.status) }
        #expect(failed.isEmpty, "\(failed)")
        #expect(!(try await nginx.settledAccessLog()).isEmpty)
        await nginx.stop()
    }

    /// Encrypted fixtures decrypt to MPEG-TS with the IV their playlist implies.
    @Test(.requires(.ffmpeg, .openssl), arguments: [FixtureRecipe.Kind.hlsAES128ExplicitIV, .hlsAES128SequenceIV])
    func encryptedSegmentsDecryptWithTheImpliedIV(kind: FixtureRecipe.Kind) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(kind))
        let playlist = try String(contentsOf: fixture.entryFile, encoding: .utf8)
        let keyLine = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-KEY") })
        #expect(keyLine.contains("IV=") == (kind == .hlsAES128ExplicitIV))
        let segments = playlist.split(separator: "\n").filter { $0.hasSuffix(".ts") }
        #expect(segments.count == 5)
        for (index, name) in segments.enumerated() {
            let cipher = Array(try Data(contentsOf: fixture.directory.appendingPathComponent(String(name))))
            let iv =
                kind == .hlsAES128ExplicitIV
                ? Fixtures.explicitIV
                : AES128CBC.iv(mediaSequence: UInt64(Fixtures.sequenceIVFirstMediaSequence + index))
            let plain = try AES128CBC.decrypt(cipher, key: try #require(fixture.key), iv: iv)
            #expect(plain.count % 188 == 0 && plain.first == 0x47, "\(name) is not MPEG-TS after decryption")
        }
    }

    @Test(.requires(.ffmpeg))
    func byteRangeFixtureIsOneFile() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsByteRange))
        let playlist = try String(contentsOf: fixture.entryFile, encoding: .utf8)
        #expect(playlist.contains("#EXT-X-BYTERANGE:"))
        #expect(try fixture.files() == ["index.m3u8", "media.ts"])
    }

    @Test(.requires(.ffmpeg))
    func discontinuityFixtureHasOneInTheMiddle() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsDiscontinuity))
        let lines = try String(contentsOf: fixture.entryFile, encoding: .utf8).split(separator: "\n")
        let marker = try #require(lines.firstIndex(of: "#EXT-X-DISCONTINUITY"))
        #expect(lines[..<marker].contains { $0.hasSuffix(".ts") } && lines[marker...].contains { $0.hasSuffix(".ts") })
    }
}
