/// RFC 6381 codec names for a multivariant playlist's CODECS attribute, from the decoder
/// configuration: players (hls.js and MSE in browsers above all) pick a variant and a decoder by
/// them, and assume H.264 without them.
extension VideoConfiguration {
    /// `avc1.PPCCLL` from the SPS's profile_idc, constraint flags and level_idc (ISO/IEC 14496-15
    /// Annex E), or `hvc1.…` from the HEVC SPS's profile_tier_level; `nil` without a readable SPS.
    public var codecString: String? {
        switch codec {
        case .h264:
            guard let sps = parameterSets.first(where: { ($0.first ?? 0) & 0x1F == 7 }), sps.count >= 4 else {
                return nil
            }
            return "avc1." + sps[1...3].map { Self.hex($0, digits: 2) }.joined().uppercased()
        case .hevc:
            guard let sps = parameterSets.first(where: { (($0.first ?? 0) >> 1) & 0x3F == 33 }) else { return nil }
            return Self.hevcCodecString(sps: sps)
        }
    }

    /// `hvc1.<space><profile>.<compatibility>.<tier><level>[.<constraints>]` (ISO/IEC 14496-15
    /// Annex E.3): the compatibility flags bit-reversed in hexadecimal, the constraint bytes
    /// without trailing zero bytes.
    static func hevcCodecString(sps: [UInt8]) -> String? {
        // The RBSP: emulation prevention bytes (0x000003) removed, after the 2-byte NAL header.
        var rbsp: [UInt8] = []
        var zeros = 0
        for byte in sps.dropFirst(2) {
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            rbsp.append(byte)
        }
        // sps_video_parameter_set_id, max_sub_layers_minus1, temporal_id_nesting: one byte; then
        // profile_space (2 bits), tier (1), profile_idc (5), 32 compatibility flags, 48 bits of
        // constraint flags, level_idc.
        guard rbsp.count >= 13 else { return nil }
        let space = ["", "A", "B", "C"][Int(rbsp[1] >> 6)]
        let tier = rbsp[1] & 0x20 != 0 ? "H" : "L"
        let profile = rbsp[1] & 0x1F
        let flags = rbsp[2...5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var reversed: UInt32 = 0
        for bit in 0..<32 where flags & (1 << bit) != 0 { reversed |= 1 << (31 - bit) }
        var constraints = Array(rbsp[6...11])
        while constraints.last == 0 { constraints.removeLast() }
        var name = "hvc1.\(space)\(profile).\(String(reversed, radix: 16).uppercased()).\(tier)\(rbsp[12])"
        for byte in constraints { name += "." + hex(byte, digits: 2).uppercased() }
        return name
    }

    static func hex(_ byte: UInt8, digits: Int) -> String {
        let text = String(byte, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension AudioSpecificConfig {
    /// `mp4a.40.N`, N the audio object type (2 for AAC LC).
    public var codecString: String { "mp4a.40.\(objectType)" }
}

extension FLVTransportStreamMuxer {
    /// The CODECS attribute of the stream so far (video first), or `nil` when the video's is unknown.
    public var codecs: String? {
        var names: [String] = []
        if let video {
            guard let name = video.codecString else { return nil }
            names.append(name)
        }
        if let audio { names.append(audio.codecString) }
        return names.isEmpty ? nil : names.joined(separator: ",")
    }
}
