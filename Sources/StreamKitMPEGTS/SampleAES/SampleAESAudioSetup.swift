/// The program map entries of protected streams, both ways: the clear stream type without the
/// SAMPLE-AES descriptors (decryption), or the encrypted type with them (encryption, §3): a
/// private_data_indicator_descriptor naming the format, and for audio a registration descriptor
/// 'apad' with the audio setup information (§2.3.4).
enum SampleAESAudioSetup {
    /// `entry` as the program map of the transformed segment lists it.
    static func edited(
        _ entry: SampleAESProgramMap.Entry, direction: SampleAESCipher.Direction, setup: [UInt8]?
    ) -> SampleAESProgramMap.Entry {
        var entry = entry
        switch direction {
        case .decrypt:
            guard let clear = SampleAESProgramMap.clearTypes[entry.type] else { return entry }
            entry.type = clear
            entry.descriptors = SampleAESProgramMap.clearDescriptors(entry.descriptors)
        case .encrypt:
            guard let encrypted = SampleAESProgramMap.encryptedTypes[entry.type] else { return entry }
            entry.type = encrypted
            let identifier: String =
                switch encrypted {
                case 0xDB: "zavc"
                case 0xCF: "aacd"
                case 0xC1: "ac3d"
                default: "ec3d"
                }
            entry.descriptors += [0x0F, 4] + Array(identifier.utf8)
            if let setup, encrypted != 0xDB {
                entry.descriptors += [0x05, UInt8(4 + setup.count)] + SampleAESProgramMap.audioSetupFormat + setup
            }
        }
        return entry
    }

    /// The audio setup information of a stream from its first PES payload: the codec tag, priming
    /// 0, version 1, and the setup data (an AudioSpecificConfig for AAC, the first 10 bytes of a
    /// sync frame for AC-3 and E-AC-3); `nil` for video or when no frame is found.
    static func information(_ protection: SampleAESProgramMap.Protection, payload: ArraySlice<UInt8>) -> [UInt8]? {
        let bytes = Array(payload)
        switch protection {
        case .h264:
            return nil
        case .adts:
            guard let frame = SampleAESAudio.nextFrame(bytes, from: 0, format: .adts) else { return nil }
            let header = bytes[frame.start..<(frame.start + 4)]
            let objectType = (header[frame.start + 2] >> 6) + 1
            let frequency = (header[frame.start + 2] >> 2) & 0x0F
            let channels = (header[frame.start + 2] & 0x01) << 2 | header[frame.start + 3] >> 6
            let config: [UInt8] = [objectType << 3 | frequency >> 1, (frequency & 1) << 7 | channels << 3]
            return Array("zaac".utf8) + [0, 0, 1, UInt8(config.count)] + config
        case .ac3:
            guard let frame = SampleAESAudio.nextFrame(bytes, from: 0, format: .ac3), frame.end - frame.start >= 10
            else { return nil }
            let tag = bytes[frame.start + 5] >> 3 > 10 ? "zec3" : "zac3"
            return Array(tag.utf8) + [0, 0, 1, 10] + bytes[frame.start..<(frame.start + 10)]
        }
    }
}
