import StreamKitCore
import StreamKitMPEGTS
import Testing

/// Decoder configuration records and length-prefixed frames into Annex B access units.
@Suite struct AnnexBTests {
    static let avcRecord: [UInt8] = Hex.decode(
        "016400 1fffe1 0003670102 01 00026803".filter { $0 != " " })!

    static func joined(_ pieces: [ArraySlice<UInt8>]) -> [UInt8] { pieces.flatMap { $0 } }

    @Test func avcRecordGivesTheParameterSets() throws {
        let configuration = try VideoConfiguration(avcRecord: Self.avcRecord[...])
        #expect(
            configuration
                == VideoConfiguration(codec: .h264, lengthSize: 4, parameterSets: [[0x67, 1, 2], [0x68, 3]]))
        #expect(throws: MPEGTSError.self) { try VideoConfiguration(avcRecord: Self.avcRecord.dropLast()) }
    }

    @Test func hevcRecordGivesVPSSPSAndPPS() throws {
        var record = [UInt8](repeating: 0, count: 21) + [0xF3, 3]
        record += [0xA0, 0, 1, 0, 2, 0x40, 0x01]
        record += [0xA1, 0, 1, 0, 3, 0x42, 0x01, 0x07]
        record += [0xA2, 0, 1, 0, 2, 0x44, 0x01]
        let configuration = try VideoConfiguration(hevcRecord: record[...])
        #expect(configuration.codec == .hevc)
        #expect(configuration.lengthSize == 4)
        #expect(configuration.parameterSets == [[0x40, 0x01], [0x42, 0x01, 0x07], [0x44, 0x01]])
        #expect(throws: MPEGTSError.self) { try VideoConfiguration(hevcRecord: record.dropLast()) }
    }

    /// The frame's own delimiter is dropped for ours; the parameter sets go before a key frame only.
    @Test func keyFrameGetsDelimiterAndParameterSets() throws {
        let configuration = try VideoConfiguration(avcRecord: Self.avcRecord[...])
        let frame: [UInt8] = [0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 3, 0x65, 0xAA, 0xBB, 0, 0, 0, 1, 0x06]
        var pieces: [ArraySlice<UInt8>] = []
        try AnnexB.accessUnit(frame[...], configuration: configuration, isKeyFrame: true, into: &pieces)
        #expect(
            Self.joined(pieces)
                == Hex.decode(
                    "0000000109f0" + "00000001670102" + "000000016803" + "0000000165aabb" + "0000000106"))
        pieces.removeAll()
        try AnnexB.accessUnit(frame[...], configuration: configuration, isKeyFrame: false, into: &pieces)
        #expect(Self.joined(pieces) == Hex.decode("0000000109f00000000165aabb0000000106"))
    }

    @Test func hevcAccessUnitStartsWithItsDelimiter() throws {
        let configuration = VideoConfiguration(codec: .hevc, lengthSize: 2, parameterSets: [[0x40, 1]])
        // A 2-byte length size; the frame's own AUD (type 35: 0x46) is dropped.
        let frame: [UInt8] = [0, 3, 0x46, 0x01, 0x50, 0, 3, 0x26, 0x01, 0xAF]
        var pieces: [ArraySlice<UInt8>] = []
        try AnnexB.accessUnit(frame[...], configuration: configuration, isKeyFrame: true, into: &pieces)
        #expect(Self.joined(pieces) == Hex.decode("00000001460150000000014001000000012601af"))
    }

    @Test func aLengthPastTheFrameIsAnError() throws {
        let configuration = try VideoConfiguration(avcRecord: Self.avcRecord[...])
        var pieces: [ArraySlice<UInt8>] = []
        #expect(throws: MPEGTSError.self) {
            try AnnexB.accessUnit(
                [0, 0, 0, 9, 0x65, 1][...], configuration: configuration, isKeyFrame: false, into: &pieces)
        }
        #expect(throws: MPEGTSError.self) {
            try AnnexB.accessUnit([0, 0, 0][...], configuration: configuration, isKeyFrame: false, into: &pieces)
        }
    }
}
