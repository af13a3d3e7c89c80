import StreamKitCore
import Testing

@testable import StreamKitMPEGTS

/// The SAMPLE-AES sample patterns (HLS Sample Encryption §2.2, §2.3) against AES-128-CBC done by
/// hand over the blocks the format names.
@Suite struct SampleAESPatternTests {
    private let key = Hex.decode("000102030405060708090a0b0c0d0e0f")!
    private let iv = Hex.decode("101112131415161718191a1b1c1d1e1f")!

    private func cipher(_ direction: SampleAESCipher.Direction) throws -> SampleAESCipher {
        try SampleAESCipher(key: key, iv: iv, direction: direction)
    }

    /// A NAL unit of `type` and `length` bytes with no `00 00` in it (no emulation prevention).
    private func unit(type: UInt8, length: Int) -> [UInt8] {
        [0x60 | type] + (1..<length).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }
    }

    @Test(
        arguments: [
            ([0, 0, 0, 0, 1], [0, 0, 3, 0, 0, 3, 1]),
            ([0, 0, 3], [0, 0, 3, 3]),
            ([0, 0, 3, 1], [0, 0, 3, 3, 1]),
            ([0, 0, 4, 0, 0], [0, 0, 4, 0, 0]),
            ([5, 0, 0, 2, 0, 0, 0], [5, 0, 0, 3, 2, 0, 0, 3, 0]),
        ] as [([UInt8], [UInt8])])
    func emulationPreventionGoesInAndComesOut(raw: [UInt8], escaped: [UInt8]) {
        #expect(SampleAESVideo.addingEmulationPrevention(raw[...]) == escaped)
        #expect(SampleAESVideo.removingEmulationPrevention(escaped[...]) == raw)
    }

    /// A 0x03 that ends a NAL unit is data, not emulation prevention.
    @Test func aTrailingThreeStays() {
        #expect(SampleAESVideo.removingEmulationPrevention([7, 0, 0, 3][...]) == [7, 0, 0, 3])
    }

    @Test(arguments: [1, 5]) func unitsOf48BytesOrLessStayClear(type: UInt8) throws {
        for length in [2, 33, 47, 48] {
            let payload = [0, 0, 0, 1] + unit(type: type, length: length)
            #expect(SampleAESVideo.transform(payload[...], cipher: try cipher(.encrypt)) == payload)
        }
        let long = [0, 0, 1] + unit(type: type, length: 49)
        let encrypted = SampleAESVideo.transform(long[...], cipher: try cipher(.encrypt))
        #expect(encrypted != long)
        #expect(encrypted.prefix(3 + 32) == long.prefix(3 + 32))
        #expect(encrypted.last == long.last, "the last byte after the only block stays clear")
    }

    @Test func otherUnitTypesStayClear() throws {
        for type: UInt8 in [6, 7, 8, 9] {
            let payload = [0, 0, 0, 1] + unit(type: type, length: 400)
            #expect(SampleAESVideo.transform(payload[...], cipher: try cipher(.encrypt)) == payload)
        }
    }

    /// One block in ten after the leader, chained across the unit; 16 bytes left at the end stay
    /// clear; the chain restarts at the next unit.
    @Test func theOneInTenPatternChainsWithinAUnit() throws {
        let nal = unit(type: 5, length: 32 + 16 + 144 + 16 + 144 + 16)
        let encrypted = SampleAESVideo.protect(nal[...], cipher: try cipher(.encrypt))
        let blocks = Array(nal[32..<48]) + Array(nal[192..<208])
        let expected = try AES128CBC.encrypt(blocks, key: key, iv: iv, padding: .none)
        var reference = nal
        reference.replaceSubrange(32..<48, with: expected[0..<16])
        reference.replaceSubrange(192..<208, with: expected[16..<32])
        // The escaped result may be longer; without emulation prevention it is the reference.
        #expect(SampleAESVideo.removingEmulationPrevention(encrypted[...]) == reference)
        #expect(reference.suffix(16) == nal.suffix(16))

        let two = [0, 0, 1] + nal + [0, 0, 0, 1] + nal
        let both = SampleAESVideo.transform(two[...], cipher: try cipher(.encrypt))
        let once = SampleAESVideo.protect(nal[...], cipher: try cipher(.encrypt))
        #expect(both == [0, 0, 1] + once + [0, 0, 0, 1] + once)
        #expect(SampleAESVideo.transform(both[...], cipher: try cipher(.decrypt)) == two)
    }

    /// Encrypted blocks that contain `00 00 0x` get emulation prevention; decryption takes it out.
    /// The plaintext is chosen so that the first block encrypts to a start code and a `00 00 00`.
    @Test func encryptedBytesThatEmulateStartCodesAreEscaped() throws {
        var nal = unit(type: 1, length: 200)
        let wanted: [UInt8] = [0, 0, 1, 7, 0, 0, 0, 9, 9, 9, 9, 9, 9, 0, 0, 2]
        nal.replaceSubrange(32..<48, with: try AES128CBC.decrypt(wanted, key: key, iv: iv, padding: .none))
        let encrypted = SampleAESVideo.protect(nal[...], cipher: try cipher(.encrypt))
        #expect(Array(encrypted[32..<51]) == [0, 0, 3, 1, 7, 0, 0, 3, 0, 9, 9, 9, 9, 9, 9, 0, 0, 3, 2])
        #expect(encrypted.count == nal.count + 3)
        #expect(SampleAESVideo.nextUnitStart(encrypted[...], from: 0) == nil)
        #expect(SampleAESVideo.protect(encrypted[...], cipher: try cipher(.decrypt)) == nal)
    }

    /// A coded unit's own emulation prevention (in the clear part and in encrypted blocks) survives.
    @Test func aUnitsOwnEmulationPreventionSurvives() throws {
        var nal = unit(type: 1, length: 300)
        nal.replaceSubrange(10..<14, with: [0, 0, 3, 1])
        nal.replaceSubrange(50..<54, with: [0, 0, 3, 0])
        nal.replaceSubrange(208..<212, with: [0, 0, 3, 2])
        let payload = [0, 0, 1] + nal
        let encrypted = SampleAESVideo.transform(payload[...], cipher: try cipher(.encrypt))
        #expect(SampleAESVideo.transform(encrypted[...], cipher: try cipher(.decrypt)) == payload)
    }

    /// An ADTS frame: header, 16 clear bytes, whole blocks chained, the tail clear; the chain
    /// restarts at each frame.
    @Test func aacFramesEncryptWholeBlocksAfterTheLeader() throws {
        let length = 7 + 16 + 32 + 5
        var frame: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0, 0x1F, 0xFC]
        frame[3] |= UInt8(length >> 11)
        frame[4] = UInt8(length >> 3 & 0xFF)
        frame[5] = UInt8(length & 0x07) << 5 | 0x1F
        frame += (0..<(length - 7)).map { UInt8($0 + 9) }
        var payload = frame + frame
        try SampleAESAudio.transform(&payload, format: .adts, cipher: try cipher(.encrypt))
        let blocks = try AES128CBC.encrypt(frame[23..<55], key: key, iv: iv, padding: .none)
        let expected = Array(frame[..<23]) + blocks + Array(frame[55...])
        #expect(payload == expected + expected)
        try SampleAESAudio.transform(&payload, format: .adts, cipher: try cipher(.decrypt))
        #expect(payload == frame + frame)
    }

    /// AC-3 frame sizes from frmsizecod and fscod (ETSI TS 102 366 Table 4.13), and E-AC-3's frmsiz.
    @Test func ac3FrameSizes() {
        func size(_ byte4: UInt8, bsid: UInt8 = 8) -> Int? {
            var header: [UInt8] = [0x0B, 0x77, 0, 0, byte4, bsid << 3, 0]
            header += [UInt8](repeating: 0, count: 8)
            return SampleAESAudio.ac3Frame(header, at: 0).map { $0.end }
        }
        #expect(size(0x00) == 128)  // 48 kHz, 32 kbit/s
        #expect(size(0x40 | 0x1E) == 1_950)  // 44.1 kHz, 448 kbit/s: 975 words
        #expect(size(0x40 | 0x1F) == 1_952)
        #expect(size(0x80 | 0x25) == 3_840)  // 32 kHz, 640 kbit/s
        #expect(size(0xC0) == nil)
        let eac3: [UInt8] = [0x0B, 0x77, 0x02, 0xFF, 0x00, 16 << 3, 0]
        #expect(SampleAESAudio.ac3Frame(eac3, at: 0)?.end == 0x300 * 2)
    }

    /// An AC-3 frame's CRC covers its encrypted blocks: decrypted with another key it fails, which
    /// is how a wrong key shows.
    @Test func ac3FramesTellAWrongKey() throws {
        // 48 kHz, 32 kbit/s: 128 bytes, the last two making the CRC over the frame after its sync word 0.
        var frame: [UInt8] = [0x0B, 0x77, 0x12, 0x34, 0x00, 8 << 3] + (6..<126).map { UInt8($0 % 251) }
        let crc = SampleAESAudio.crc16(frame[2...])
        frame += [UInt8(crc >> 8), UInt8(crc & 0xFF)]
        #expect(SampleAESAudio.crc16(frame[2...]) == 0)
        var payload = frame
        try SampleAESAudio.transform(&payload, format: .ac3, cipher: try cipher(.encrypt))
        #expect(payload.prefix(16) == frame.prefix(16) && payload != frame)
        var decrypted = payload
        try SampleAESAudio.transform(&decrypted, format: .ac3, cipher: try cipher(.decrypt))
        #expect(decrypted == frame)
        let wrong = try SampleAESCipher(key: Array(key.reversed()), iv: iv, direction: .decrypt)
        #expect(throws: SampleAESError.self) { try SampleAESAudio.transform(&payload, format: .ac3, cipher: wrong) }
    }

    @Test func aKeyOfTheWrongLengthIsAnError() {
        #expect(throws: SampleAESError.self) { try SampleAESCipher(key: [1, 2], iv: iv, direction: .decrypt) }
    }
}
