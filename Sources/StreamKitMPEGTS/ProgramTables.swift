/// `stream_type` values of a program map table (ISO/IEC 13818-1 Table 2-34, and the registrations
/// in its amendments for HEVC).
public struct TSStreamType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x0F: ISO/IEC 13818-7 AAC audio with ADTS transport syntax.
    public static let aacADTS = TSStreamType(rawValue: 0x0F)
    /// 0x1B: ITU-T H.264 / AVC video.
    public static let h264 = TSStreamType(rawValue: 0x1B)
    /// 0x24: ITU-T H.265 / HEVC video.
    public static let hevc = TSStreamType(rawValue: 0x24)
}

/// One elementary stream of the program: its type and PID.
public struct TSElementaryStream: Hashable, Sendable {
    public var type: TSStreamType
    public var pid: UInt16

    public init(type: TSStreamType, pid: UInt16) {
        self.type = type
        self.pid = pid
    }
}

/// The program-specific information sections of a single-program transport stream
/// (ISO/IEC 13818-1 §2.4.4): the program association table and the program map table, each a
/// complete section with its CRC_32.
public enum ProgramTables {
    /// The PID of the program association table.
    public static let patPID: UInt16 = 0x0000
    /// The PID this muxer gives the program map table.
    public static let pmtPID: UInt16 = 0x1000
    /// The program number of the one program.
    public static let programNumber: UInt16 = 1

    /// §2.4.4.3 program_association_section: program 1 at ``pmtPID``.
    public static func associationSection(transportStreamID: UInt16 = 1) -> [UInt8] {
        var body: [UInt8] = []
        append16(transportStreamID, to: &body)
        body.append(0xC1)  // reserved '11', version 0, current_next_indicator 1
        body += [0x00, 0x00]  // section_number, last_section_number
        append16(programNumber, to: &body)
        append16(0xE000 | pmtPID, to: &body)
        return section(tableID: 0x00, body: body)
    }

    /// §2.4.4.8 TS_program_map_section for `streams`, with the PCR on `pcrPID`.
    public static func mapSection(streams: [TSElementaryStream], pcrPID: UInt16, version: UInt8 = 0) -> [UInt8] {
        var body: [UInt8] = []
        append16(programNumber, to: &body)
        body.append(0xC1 | (version & 0x1F) << 1)
        body += [0x00, 0x00]
        append16(0xE000 | pcrPID, to: &body)
        append16(0xF000, to: &body)  // program_info_length 0
        for stream in streams {
            body.append(stream.type.rawValue)
            append16(0xE000 | stream.pid, to: &body)
            append16(0xF000, to: &body)  // ES_info_length 0
        }
        return section(tableID: 0x02, body: body)
    }

    /// A long-form section: table_id, section_syntax_indicator 1, the length, `body`, CRC_32.
    private static func section(tableID: UInt8, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [tableID]
        append16(0xB000 | UInt16(body.count + 4), to: &bytes)
        bytes += body
        let crc = CRC32MPEG2.checksum(bytes)
        bytes += [
            UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8),
            UInt8(truncatingIfNeeded: crc),
        ]
        return bytes
    }

    private static func append16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }
}
