/// Turns length-prefixed NAL units (ISO/IEC 14496-15, as FLV carries them) into an access unit
/// in the byte-stream format of H.264/H.265 Annex B, as MPEG-TS carries them: an access unit
/// delimiter first, the parameter sets before a key frame, each NAL unit after a start code.
///
/// The result is a list of slices: start codes and parameter sets from the configuration, NAL
/// units still inside the frame's bytes.
public enum AnnexB {
    static let startCode: [UInt8] = [0x00, 0x00, 0x00, 0x01]
    /// H.264 access_unit_delimiter (NAL type 9), primary_pic_type 7: any slice type.
    static let h264Delimiter: [UInt8] = [0x00, 0x00, 0x00, 0x01, 0x09, 0xF0]
    /// H.265 AUD_NUT (type 35), layer 0, temporal id 1, pic_type 2: any slice type.
    static let hevcDelimiter: [UInt8] = [0x00, 0x00, 0x00, 0x01, 0x46, 0x01, 0x50]

    /// Appends the access unit of `frame` to `pieces`.
    ///
    /// - Parameters:
    ///   - frame: The NAL units, each after a big-endian length of `configuration.lengthSize` bytes.
    ///   - isKeyFrame: Whether the parameter sets go first.
    /// - Throws: ``MPEGTSError`` when a length runs past the frame.
    public static func accessUnit(
        _ frame: ArraySlice<UInt8>, configuration: VideoConfiguration, isKeyFrame: Bool,
        into pieces: inout [ArraySlice<UInt8>]
    ) throws(MPEGTSError) {
        let isHEVC = configuration.codec == .hevc
        pieces.append(isHEVC ? hevcDelimiter[...] : h264Delimiter[...])
        if isKeyFrame {
            for set in configuration.parameterSets {
                pieces.append(startCode[...])
                pieces.append(set[...])
            }
        }
        var index = frame.startIndex
        let size = configuration.lengthSize
        while index < frame.endIndex {
            guard frame.endIndex - index >= size else {
                throw MPEGTSError(.invalidFrame, "a NAL unit length cut off at the end of the frame")
            }
            var length = 0
            for offset in 0..<size { length = length << 8 | Int(frame[index + offset]) }
            index += size
            guard length <= frame.endIndex - index else {
                throw MPEGTSError(.invalidFrame, "a NAL unit of \(length) bytes in \(frame.endIndex - index)")
            }
            let unit = frame[index..<(index + length)]
            index += length
            guard let first = unit.first else { continue }
            // The frame's own delimiters would follow ours.
            let isDelimiter = isHEVC ? (first >> 1) & 0x3F == 35 : first & 0x1F == 9
            if isDelimiter { continue }
            pieces.append(startCode[...])
            pieces.append(unit)
        }
    }
}
