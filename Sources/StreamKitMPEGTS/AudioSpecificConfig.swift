/// The parts of an MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1) that an ADTS header
/// (ISO/IEC 13818-7 §6.2) repeats before every AAC frame.
public struct AudioSpecificConfig: Hashable, Sendable {
    /// audioObjectType of the core codec (2 for AAC LC); HE-AAC's SBR is signalled implicitly in ADTS.
    public var objectType: UInt8
    /// samplingFrequencyIndex of the core codec.
    public var frequencyIndex: UInt8
    /// channelConfiguration.
    public var channelConfiguration: UInt8

    public init(objectType: UInt8, frequencyIndex: UInt8, channelConfiguration: UInt8) {
        self.objectType = objectType
        self.frequencyIndex = frequencyIndex
        self.channelConfiguration = channelConfiguration
    }

    /// Reads an AudioSpecificConfig.
    ///
    /// - Throws: ``MPEGTSError`` when it is short, or describes what ADTS cannot carry (an
    ///   explicit frequency, an object type above 4).
    public init(bytes: some Collection<UInt8>) throws(MPEGTSError) {
        var reader = BitReader(Array(bytes))
        guard var objectType = reader.read(5), let frequencyIndex = reader.read(4) else {
            throw MPEGTSError(.invalidConfiguration, "AudioSpecificConfig of \(bytes.count) bytes")
        }
        if objectType == 31 { objectType = 32 + (reader.read(6) ?? 0) }
        guard frequencyIndex != 15, let channels = reader.read(4) else {
            throw MPEGTSError(.unsupportedCodec, "AAC with an explicit sampling frequency")
        }
        // HE-AAC (SBR 5, PS 29) signalled explicitly: the extension frequency, then the core's object type.
        if objectType == 5 || objectType == 29 {
            guard reader.read(4) != nil, let core = reader.read(5) else {
                throw MPEGTSError(.invalidConfiguration, "HE-AAC AudioSpecificConfig without a core object type")
            }
            objectType = core
        }
        guard (1...4).contains(objectType) else {
            throw MPEGTSError(.unsupportedCodec, "AAC object type \(objectType) has no ADTS profile")
        }
        self.init(
            objectType: UInt8(objectType), frequencyIndex: UInt8(frequencyIndex), channelConfiguration: UInt8(channels))
    }

    /// The sampling rate in Hz, from the index (ISO/IEC 14496-3 Table 1.18).
    public var sampleRate: Int {
        let rates = [
            96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350,
        ]
        return Int(frequencyIndex) < rates.count ? rates[Int(frequencyIndex)] : 0
    }

    /// The 7-byte ADTS header (no CRC) for a raw AAC frame of `payloadLength` bytes.
    public func adtsHeader(payloadLength: Int) -> [UInt8] {
        let length = payloadLength + 7
        return [
            0xFF, 0xF1,  // syncword, MPEG-4, layer 0, protection_absent
            (objectType - 1) << 6 | frequencyIndex << 2 | channelConfiguration >> 2 & 0x01,
            (channelConfiguration & 0x03) << 6 | UInt8(truncatingIfNeeded: length >> 11) & 0x03,
            UInt8(truncatingIfNeeded: length >> 3),
            UInt8(truncatingIfNeeded: length << 5) | 0x1F,  // buffer fullness 0x7FF: variable rate
            0xFC,  // the rest of the fullness, one raw data block
        ]
    }
}

/// Reads big-endian bit fields.
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next `count` bits (at most 32), or `nil` past the end.
    mutating func read(_ count: Int) -> UInt32? {
        guard position + count <= bytes.count * 8 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<count {
            let bit = bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1
            value = value << 1 | UInt32(bit)
            position += 1
        }
        return value
    }
}
