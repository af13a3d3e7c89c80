import StreamKitCore
import StreamKitMPEGTS
import Testing

/// RFC 6381 names for CODECS, from the parameter sets (ISO/IEC 14496-15 Annex E).
@Suite struct CodecStringTests {
    @Test func h264FromItsSPS() {
        let high = VideoConfiguration(
            codec: .h264, lengthSize: 4, parameterSets: [[0x67, 0x64, 0x00, 0x1F, 0xAC], [0x68, 0xEB]])
        #expect(high.codecString == "avc1.64001F")
        let baseline = VideoConfiguration(codec: .h264, lengthSize: 4, parameterSets: [[0x67, 0x42, 0xC0, 0x0D]])
        #expect(baseline.codecString == "avc1.42C00D")
        #expect(VideoConfiguration(codec: .h264, lengthSize: 4, parameterSets: [[0x68, 0xEB]]).codecString == nil)
    }

    /// Main profile, compatible with Main and Main 10, progressive-source and frame-only
    /// constraints, level 3.1: `hvc1.1.6.L93.90`; an emulation prevention byte is not data.
    @Test func hevcFromItsProfileTierLevel() {
        let main: [UInt8] = [0x42, 0x01, 0x01, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 0x5D, 0xA0]
        #expect(VideoConfiguration(codec: .hevc, lengthSize: 4, parameterSets: [main]).codecString == "hvc1.1.6.L93.90")
        // High tier, profile space 0, compatibility 0x00000100 written as 00 00 03 01 00 (an EPB).
        let escaped: [UInt8] = [0x42, 0x01, 0x01, 0x22, 0x00, 0x00, 0x03, 0x01, 0x00, 0xB0, 0, 0, 0, 0, 0x01, 0x99]
        #expect(
            VideoConfiguration(codec: .hevc, lengthSize: 4, parameterSets: [[0x40, 0x01], escaped]).codecString
                == "hvc1.2.800000.H153.B0.00.00.00.00.01")
        #expect(VideoConfiguration(codec: .hevc, lengthSize: 4, parameterSets: [[0x40, 0x01]]).codecString == nil)
    }

    @Test func aacFromItsObjectType() {
        #expect(
            AudioSpecificConfig(objectType: 2, frequencyIndex: 4, channelConfiguration: 2).codecString == "mp4a.40.2")
        #expect(
            AudioSpecificConfig(objectType: 5, frequencyIndex: 4, channelConfiguration: 2).codecString == "mp4a.40.5")
    }
}
