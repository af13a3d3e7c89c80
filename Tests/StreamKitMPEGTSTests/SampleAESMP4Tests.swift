import Foundation
import StreamKitCore
import StreamKitMPEGTS
import StreamKitTestSupport
import Testing

/// SAMPLE-AES in fragmented MP4 (`cbcs`): the test encryptor proved by ffmpeg's mov demuxer (an
/// independent decryption, `-decryption_key`), and the library's decryption giving back the clear
/// packets; damaged input fails with a typed error, never a crash.
@Suite(.requires(.ffmpeg)) struct SampleAESMP4Tests {
    /// The packets of `file` (`-c copy`: their bytes hashed, no decoding), with a key or without.
    static func packets(_ file: URL, key: [UInt8]? = nil) async throws -> [String] {
        let keyArguments = key.map { ["-decryption_key", Hex.encode($0)] } ?? []
        let output = try await Tool.ffmpeg.run(
            ["-hide_banner", "-loglevel", "error"] + keyArguments + [
                "-i", file.path, "-map", "0", "-c", "copy", "-f", "framemd5", "-",
            ])
        return output.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    @Test func ffmpegDecryptsWhatTheEncryptorMakes() async throws {
        let fixture = try await SampleAESMP4Fixture.make()
        let clear = try fixture.concatenated(init: "clear-init.mp4", segments: fixture.clearSegments, to: "clear.mp4")
        let encrypted = try fixture.concatenated(init: "init.mp4", segments: fixture.segments, to: "encrypted.mp4")
        let clearPackets = try await Self.packets(clear)
        #expect(clearPackets.count > 100)
        let encryptedPackets = try await Self.packets(encrypted)
        #expect(encryptedPackets.count == clearPackets.count)
        #expect(zip(encryptedPackets, clearPackets).filter { $0 != $1 }.count > clearPackets.count / 2, "encrypted")
        #expect(try await Self.packets(encrypted, key: fixture.key) == clearPackets)
    }

    @Test func decryptedSegmentsHoldTheClearPackets() async throws {
        let fixture = try await SampleAESMP4Fixture.make()
        let encryptedInit = Array(try Data(contentsOf: fixture.directory.appendingPathComponent("init.mp4")))
        let protection = try MP4Protection.parse(initSegment: encryptedInit)
        #expect(protection.tracks.count == 2)
        #expect(protection.tracks.values.map { MP4Box.name($0.originalFormat) }.sorted() == ["avc1", "mp4a"])
        #expect(protection.tracks.values.map { "\($0.cryptByteBlock):\($0.skipByteBlock)" }.sorted() == ["1:0", "1:9"])
        let clearInit = try MP4Protection.clearInitSegment(encryptedInit)
        #expect(clearInit.count == encryptedInit.count)
        try Data(clearInit).write(to: fixture.directory.appendingPathComponent("decrypted-init.mp4"))
        var names: [String] = []
        for segment in fixture.segments {
            let encrypted = Array(try Data(contentsOf: fixture.directory.appendingPathComponent(segment)))
            let decrypted = try protection.decryptSegment(encrypted, key: fixture.key, iv: fixture.iv)
            #expect(decrypted.count == encrypted.count)
            try Data(decrypted).write(to: fixture.directory.appendingPathComponent("decrypted-" + segment))
            names.append("decrypted-" + segment)
        }
        let decrypted = try fixture.concatenated(init: "decrypted-init.mp4", segments: names, to: "decrypted.mp4")
        let clear = try fixture.concatenated(init: "clear-init.mp4", segments: fixture.clearSegments, to: "clear.mp4")
        #expect(try await Self.packets(decrypted) == (try await Self.packets(clear)))
        // A clear init has nothing protected left, and reads as such.
        #expect(try MP4Protection.parse(initSegment: clearInit).tracks.isEmpty)
    }

    @Test func damagedInputFailsWithATypedError() async throws {
        let fixture = try await SampleAESMP4Fixture.make(seconds: 2)
        let initBytes = Array(try Data(contentsOf: fixture.directory.appendingPathComponent("init.mp4")))
        let segment = Array(try Data(contentsOf: fixture.directory.appendingPathComponent(fixture.segments[0])))
        let protection = try MP4Protection.parse(initSegment: initBytes)
        // Every truncation of the init and of the segment: an error or a result, never a crash.
        for length in stride(from: 0, to: initBytes.count, by: 7) {
            _ = try? MP4Protection.parse(initSegment: Array(initBytes.prefix(length)))
        }
        for length in stride(from: 0, to: segment.count, by: 97) {
            _ = try? protection.decryptSegment(Array(segment.prefix(length)), key: fixture.key, iv: fixture.iv)
        }
        // A box whose size runs past its parent.
        var oversized = initBytes
        oversized[3] = 0xFF
        #expect(throws: SampleAESError.self) { try MP4Protection.parse(initSegment: oversized) }
        #expect(throws: SampleAESError.self) {
            try MP4Protection.parse(initSegment: [0, 0, 0, 4] + Array("moov".utf8))
        }
        // Another scheme: 'cenc' is refused by name.
        var cenc = initBytes
        let schm = Array("schm".utf8)
        var index = 0
        while index + 12 < cenc.count {
            if Array(cenc[index..<index + 4]) == schm {
                cenc.replaceSubrange(index + 8..<index + 12, with: Array("cenc".utf8))
            }
            index += 1
        }
        do {
            _ = try MP4Protection.parse(initSegment: cenc)
            Issue.record("a cenc init was taken")
        } catch {
            #expect(error.kind == .unsupportedProtection && error.detail.contains("'cenc'"), "\(error)")
        }
        #expect(throws: SampleAESError.self) { try protection.decryptSegment(segment, key: [1, 2, 3], iv: fixture.iv) }
        // A run whose data offset points into the moof (found by the fuzzer): its samples would
        // decrypt box headers; refused.
        var misplaced = segment
        let trun = Array("trun".utf8)
        let at = try #require((0..<misplaced.count - 4).first { Array(misplaced[$0..<$0 + 4]) == trun })
        misplaced.replaceSubrange(at + 12..<at + 16, with: [0, 0, 0, 8])
        do {
            _ = try protection.decryptSegment(misplaced, key: fixture.key, iv: fixture.iv)
            Issue.record("samples outside the mdat were decrypted")
        } catch {
            #expect(error.detail.contains("not inside an 'mdat'"), "\(error)")
        }
    }
}
