import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitMPEGTS

/// SAMPLE-AES MPEG-TS segments: synthetic streams round-trip byte for byte; the encryptor is
/// proved by ffmpeg's HLS demuxer (an independent decryption), and the decryptor gives back the
/// clear source's frames.
@Suite struct SampleAESTransportStreamTests {
    private let key = Hex.decode("000102030405060708090a0b0c0d0e0f")!
    private let iv = Hex.decode("101112131415161718191a1b1c1d1e1f")!

    /// A NAL unit with runs of zeros, so that its emulation prevention and the encrypted bytes'
    /// both matter.
    private func unit(type: UInt8, length: Int, seed: Int) -> [UInt8] {
        var bytes: [UInt8] = [0x60 | type]
        var state = UInt64(seed) &+ 0x9E37_79B9
        while bytes.count < length {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let value = UInt8(truncatingIfNeeded: state >> 56)
            bytes += value < 24 ? [0, 0, 3, value & 3] : [value]
        }
        return Array(AnnexBTrim.trimmed(bytes.prefix(length)))
    }

    /// One ADTS frame of `length` bytes.
    private func adtsFrame(length: Int, fill: UInt8) -> [UInt8] {
        let header: [UInt8] = [
            0xFF, 0xF1, 0x50, 0x80 | UInt8(length >> 11), UInt8(length >> 3 & 0xFF), UInt8(length & 7) << 5 | 0x1F,
            0xFC,
        ]
        return header + (7..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ fill }
    }

    /// PAT, PMT (H.264 on 0x100, AAC on 0x101), then video PES packets spanning many TS packets,
    /// each with a PCR, and audio PES packets of several frames.
    private func clearSegment() -> [UInt8] {
        var writer = TSPacketWriter()
        var output: [UInt8] = []
        writer.writeSection(ProgramTables.associationSection(), pid: 0, into: &output)
        let streams = [TSElementaryStream(type: .h264, pid: 0x100), TSElementaryStream(type: .aacADTS, pid: 0x101)]
        writer.writeSection(
            ProgramTables.mapSection(streams: streams, pcrPID: 0x100), pid: ProgramTables.pmtPID, into: &output)
        for picture in 0..<4 {
            var access: [UInt8] = [0, 0, 0, 1, 0x09, 0xF0]
            if picture == 0 { access += [0, 0, 0, 1] + [0x67, 0x42, 0xC0, 0x1E, 0xD9] }
            access += [0, 0, 0, 1] + unit(type: picture == 0 ? 5 : 1, length: 3_000 + picture * 777, seed: picture)
            access += [0, 0, 1] + unit(type: 1, length: 48, seed: 99)
            access += [0, 0, 1] + unit(type: 1, length: 200, seed: picture + 7)
            writer.writePES(
                PESHeader(
                    streamID: PESHeader.videoStreamID, presentationTime: UInt64(picture) * 3_600, payloadLength: 0),
                payload: [access[...]], pid: 0x100, pcr: UInt64(picture) * 3_600, randomAccess: picture == 0,
                into: &output)
            let audio =
                adtsFrame(length: 181, fill: UInt8(picture)) + adtsFrame(length: 30, fill: 1)
                + adtsFrame(length: 400, fill: 2)
            writer.writePES(
                PESHeader(
                    streamID: PESHeader.audioStreamID, presentationTime: UInt64(picture) * 3_600,
                    payloadLength: audio.count),
                payload: [audio[...]], pid: 0x101, pcr: nil, randomAccess: false, into: &output)
        }
        return output
    }

    @Test func encryptionThenDecryptionGivesTheSameBytes() throws {
        let clear = clearSegment()
        let encrypted = try SampleAESTransportStream.encrypt(clear, key: key, iv: iv)
        #expect(encrypted != clear)
        #expect(encrypted.count > clear.count, "emulation prevention after encryption made video packets")
        let map = try #require(TransportStreamPacket(encrypted, at: 188))
        let entries = try #require(
            SampleAESProgramMap.entries(section: encrypted[(map.payloadStart + 1)..<map.payloadEnd]))
        #expect(entries.map(\.type) == [0xDB, 0xCF])
        #expect(entries[0].descriptors == [0x0F, 4] + Array("zavc".utf8))
        #expect(Array(entries[1].descriptors.prefix(6)) == [0x0F, 4] + Array("aacd".utf8))
        #expect(Array(entries[1].descriptors.dropFirst(6).prefix(10)) == [0x05, 4 + 10] + Array("apadzaac".utf8))

        let decrypted = try SampleAESTransportStream.decrypt(encrypted, key: key, iv: iv)
        #expect(decrypted == clear)
    }

    @Test func aClearSegmentIsLeftAlone() throws {
        let clear = clearSegment()
        #expect(try SampleAESTransportStream.decrypt(clear, key: key, iv: iv) == clear)
    }

    @Test func otherBytesAreNotATransportStream() {
        #expect(throws: SampleAESError.self) {
            try SampleAESTransportStream.decrypt([UInt8](repeating: 0xFF, count: 376), key: key, iv: iv)
        }
        #expect(throws: SampleAESError.self) {
            try SampleAESTransportStream.decrypt(Array(clearSegment().dropLast()), key: key, iv: iv)
        }
    }

    /// The checksum of every decoded frame of every stream of `input`.
    private func frames(_ input: String) async throws -> [String] {
        let hls = input.hasSuffix(".m3u8") ? ["-allowed_extensions", "ALL"] : []
        let output = try await Tool.ffmpeg.run(
            ["-nostdin", "-v", "error"] + hls + ["-i", input, "-map", "0", "-f", "framemd5", "-"])
        return output.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// The independent check of the encryptor: ffmpeg's HLS demuxer, given the key by nginx,
    /// decrypts the encrypted stream to the clear stream's frames; read as plain MPEG-TS (no
    /// decryption) the same segments decode to other frames.
    ///
    /// ffmpeg 5.1 decrypts a packet only while a segment is current, and the stream's last video
    /// packet comes out after the last segment ended: the playlist ffmpeg reads repeats the first
    /// segment after a discontinuity, so that every clear frame is among those it decodes (compared
    /// by stream, duration, size and checksum: the frames at the discontinuity get other times).
    @Test(.requires(.ffmpeg, .nginx), arguments: SampleAESFixture.Audio.allCases)
    func ffmpegDecryptsWhatTheEncryptorMakes(audio: SampleAESFixture.Audio) async throws {
        let fixture = try await SampleAESFixtures.shared.fixture(audio)
        let playlist = try String(contentsOf: fixture.playlist, encoding: .utf8)
        let check = playlist.replacingOccurrences(
            of: "#EXT-X-ENDLIST", with: "#EXT-X-DISCONTINUITY\n#EXTINF:2.0,\nseg000.ts\n#EXT-X-ENDLIST")
        #expect(check != playlist)
        try check.write(to: fixture.directory.appendingPathComponent("check.m3u8"), atomically: true, encoding: .utf8)
        let nginx = try await Nginx.static(root: fixture.directory)
        let clear = try await frames(fixture.clearPlaylist.path)
        /// A frame without its decoding and presentation times.
        func content(_ line: String) -> String {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return ([fields[0]] + fields.dropFirst(3)).joined(separator: ",")
        }
        let decrypted = Set(try await frames(nginx.url("check.m3u8").absoluteString).map(content))
        #expect(clear.count > 200)
        let missing = clear.filter { !decrypted.contains(content($0)) }
        #expect(missing.isEmpty, "frames of the clear stream ffmpeg did not decode: \(missing)")
        let keyRequests = try await nginx.settledAccessLog().filter { $0.uri == "/key.bin" }
        #expect(!keyRequests.isEmpty)
        await nginx.stop()

        let asIs = try await frames(fixture.directory.appendingPathComponent("seg000.ts").path)
        let clearFirst = try await frames(fixture.directory.appendingPathComponent("clear000.ts").path)
        #expect(asIs != clearFirst)
    }

    /// The decryptor gives back segments that decode to the clear segments' frames.
    @Test(.requires(.ffmpeg), arguments: SampleAESFixture.Audio.allCases)
    func decryptedSegmentsDecodeToTheClearFrames(audio: SampleAESFixture.Audio) async throws {
        let fixture = try await SampleAESFixtures.shared.fixture(audio)
        let output = try TestRun.makeTemporaryDirectory("sample-aes-\(audio)")
        for number in 0..<3 {
            let name = String(format: "%03d.ts", number)
            let encrypted = try Data(contentsOf: fixture.directory.appendingPathComponent("seg" + name))
            let clear = try await frames(fixture.directory.appendingPathComponent("clear" + name).path)
            let decrypted = try SampleAESTransportStream.decrypt(
                Array(encrypted), key: SampleAESFixtures.key, iv: SampleAESFixtures.iv)
            let file = output.appendingPathComponent(name)
            try Data(decrypted).write(to: file)
            #expect(try await frames(file.path) == clear, "segment \(number)")
        }
    }
}

/// A NAL unit cut to a length must not end in a zero byte (H.264 §7.4.1).
private enum AnnexBTrim {
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while bytes.last == 0 || bytes.last == 3 && bytes.dropLast().suffix(2) == [0, 0] { bytes = bytes.dropLast() }
        return bytes
    }
}
