/// The video codecs an FLV stream can carry into MPEG-TS.
public enum VideoCodec: Hashable, Sendable {
    case h264
    case hevc

    /// The PMT stream_type.
    public var streamType: TSStreamType { self == .h264 ? .h264 : .hevc }
}

/// A decoder configuration record reduced to what an Annex B stream needs: the NAL unit length
/// size of the frames and the parameter sets to repeat before each key frame.
public struct VideoConfiguration: Hashable, Sendable {
    public var codec: VideoCodec
    /// Bytes in each NAL unit's length prefix (1, 2 or 4).
    public var lengthSize: Int
    /// Parameter sets (VPS, SPS, PPS for HEVC; SPS, PPS for H.264) in decoding order.
    public var parameterSets: [[UInt8]]

    public init(codec: VideoCodec, lengthSize: Int, parameterSets: [[UInt8]]) {
        self.codec = codec
        self.lengthSize = lengthSize
        self.parameterSets = parameterSets
    }

    /// Reads an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.3.3.1).
    ///
    /// - Throws: ``MPEGTSError`` when the record is short or malformed.
    public init(avcRecord bytes: ArraySlice<UInt8>) throws(MPEGTSError) {
        var reader = ByteReader(bytes)
        guard reader.skip(4), let sizeByte = reader.byte(), let spsCount = reader.byte() else {
            throw MPEGTSError(.invalidConfiguration, "avcC of \(bytes.count) bytes")
        }
        var sets: [[UInt8]] = []
        for _ in 0..<(spsCount & 0x1F) { sets.append(try reader.parameterSet("avcC SPS")) }
        guard let ppsCount = reader.byte() else { throw MPEGTSError(.invalidConfiguration, "avcC without PPS count") }
        for _ in 0..<ppsCount { sets.append(try reader.parameterSet("avcC PPS")) }
        try self.init(codec: .h264, lengthSizeMinusOne: sizeByte & 0x03, parameterSets: sets)
    }

    /// Reads an HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 §8.3.3.1).
    ///
    /// - Throws: ``MPEGTSError`` when the record is short or malformed.
    public init(hevcRecord bytes: ArraySlice<UInt8>) throws(MPEGTSError) {
        var reader = ByteReader(bytes)
        guard reader.skip(21), let sizeByte = reader.byte(), let arrays = reader.byte() else {
            throw MPEGTSError(.invalidConfiguration, "hvcC of \(bytes.count) bytes")
        }
        var sets: [[UInt8]] = []
        for _ in 0..<arrays {
            guard reader.skip(1), let count = reader.uint16() else {
                throw MPEGTSError(.invalidConfiguration, "hvcC array header")
            }
            for _ in 0..<count { sets.append(try reader.parameterSet("hvcC NAL unit")) }
        }
        try self.init(codec: .hevc, lengthSizeMinusOne: sizeByte & 0x03, parameterSets: sets)
    }

    private init(codec: VideoCodec, lengthSizeMinusOne: UInt8, parameterSets: [[UInt8]]) throws(MPEGTSError) {
        guard lengthSizeMinusOne != 2 else {
            throw MPEGTSError(.invalidConfiguration, "a NAL unit length size of 3 bytes")
        }
        self.init(codec: codec, lengthSize: Int(lengthSizeMinusOne) + 1, parameterSets: parameterSets)
    }
}

/// A cursor over a configuration record.
struct ByteReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func skip(_ count: Int) -> Bool {
        guard bytes.count >= count else { return false }
        bytes = bytes.dropFirst(count)
        return true
    }

    mutating func byte() -> UInt8? { bytes.popFirst() }

    mutating func uint16() -> UInt16? {
        guard let high = byte(), let low = byte() else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    /// A 16-bit length, then that many bytes.
    mutating func parameterSet(_ what: String) throws(MPEGTSError) -> [UInt8] {
        guard let length = uint16(), bytes.count >= Int(length) else {
            throw MPEGTSError(.invalidConfiguration, "\(what) runs past the record")
        }
        defer { bytes = bytes.dropFirst(Int(length)) }
        return Array(bytes.prefix(Int(length)))
    }
}
