/// The program tables of a SAMPLE-AES transport stream (HLS Sample Encryption §3): the stream
/// types that mark encrypted streams, and the descriptors that come with them.
enum SampleAESProgramMap {
    /// How a protected stream's samples are laid out.
    enum Protection: Sendable {
        case h264, adts, ac3
    }

    /// An elementary stream's entry in a program map section.
    struct Entry: Sendable {
        var type: UInt8
        var pid: UInt16
        /// Its descriptors, as written.
        var descriptors: [UInt8]
    }

    /// Encrypted stream types (§3) and the clear types they stand for.
    static let clearTypes: [UInt8: UInt8] = [0xDB: 0x1B, 0xCF: 0x0F, 0xC1: 0x81, 0xC2: 0x87]
    static let encryptedTypes: [UInt8: UInt8] = [0x1B: 0xDB, 0x0F: 0xCF, 0x81: 0xC1, 0x87: 0xC2]

    /// The sample layout of encrypted stream type `type`, if it is one.
    static func protection(ofEncrypted type: UInt8) -> Protection? {
        switch type {
        case 0xDB: .h264
        case 0xCF: .adts
        case 0xC1, 0xC2: .ac3
        default: nil
        }
    }

    /// The private data identifiers (private_data_indicator_descriptor, tag 0x0F) of §3.
    static let privateDataIdentifiers: Set<[UInt8]> = [
        Array("zavc".utf8), Array("aacd".utf8), Array("ac3d".utf8), Array("ec3d".utf8),
    ]
    /// The registration descriptor (tag 0x05) that carries audio setup information (§2.3.4).
    static let audioSetupFormat = Array("apad".utf8)

    /// `descriptors` without the SAMPLE-AES ones (private data indicators, audio setup information).
    static func clearDescriptors(_ descriptors: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index + 2 <= descriptors.count {
            let tag = descriptors[index]
            let end = min(descriptors.count, index + 2 + Int(descriptors[index + 1]))
            let body = Array(descriptors[(index + 2)..<end])
            let isEncryptionDescriptor =
                (tag == 0x0F && privateDataIdentifiers.contains(body))
                || (tag == 0x05 && body.starts(with: audioSetupFormat))
            if !isEncryptionDescriptor { output += descriptors[index..<end] }
            index = end
        }
        return output
    }

    /// The program map PIDs of a program association section (§2.4.4.3); `nil` when malformed.
    static func programMapPIDs(section: ArraySlice<UInt8>) -> [UInt16]? {
        guard let body = sectionBody(section, tableID: 0x00) else { return nil }
        var pids: [UInt16] = []
        var index = body.startIndex + 5
        while index + 4 <= body.endIndex {
            let program = UInt16(body[index]) << 8 | UInt16(body[index + 1])
            if program != 0 { pids.append(UInt16(body[index + 2] & 0x1F) << 8 | UInt16(body[index + 3])) }
            index += 4
        }
        return pids
    }

    /// The elementary streams of a program map section (§2.4.4.8); `nil` when malformed.
    static func entries(section: ArraySlice<UInt8>) -> [Entry]? {
        guard let body = sectionBody(section, tableID: 0x02), body.count >= 9 else { return nil }
        let infoLength = Int(body[body.startIndex + 7] & 0x0F) << 8 | Int(body[body.startIndex + 8])
        guard 9 + infoLength <= body.count else { return nil }
        var index = body.startIndex + 9 + infoLength
        var entries: [Entry] = []
        while index + 5 <= body.endIndex {
            let length = Int(body[index + 3] & 0x0F) << 8 | Int(body[index + 4])
            guard index + 5 + length <= body.endIndex else { return nil }
            entries.append(
                Entry(
                    type: body[index], pid: UInt16(body[index + 1] & 0x1F) << 8 | UInt16(body[index + 2]),
                    descriptors: Array(body[(index + 5)..<(index + 5 + length)])))
            index += 5 + length
        }
        return entries
    }

    /// A program map section with its entries edited by `edit` and a new CRC_32; `nil` when
    /// `section` is malformed.
    static func rewritten(section: ArraySlice<UInt8>, edit: (Entry) -> Entry) -> [UInt8]? {
        guard let body = sectionBody(section, tableID: 0x02), let entries = entries(section: section) else {
            return nil
        }
        let infoLength = Int(body[body.startIndex + 7] & 0x0F) << 8 | Int(body[body.startIndex + 8])
        var newBody = Array(body[body.startIndex..<(body.startIndex + 9 + infoLength)])
        for entry in entries.map(edit) {
            newBody.append(entry.type)
            newBody += [0xE0 | UInt8(entry.pid >> 8), UInt8(truncatingIfNeeded: entry.pid)]
            newBody += [0xF0 | UInt8(entry.descriptors.count >> 8), UInt8(truncatingIfNeeded: entry.descriptors.count)]
            newBody += entry.descriptors
        }
        let length = newBody.count + 4
        var bytes: [UInt8] = [0x02, section[section.startIndex + 1] & 0xF0 | UInt8(length >> 8), UInt8(length & 0xFF)]
        bytes += newBody
        let crc = CRC32MPEG2.checksum(bytes)
        bytes += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        return bytes
    }

    /// The bytes of a long-form section after its 3-byte header and before its CRC_32.
    private static func sectionBody(_ section: ArraySlice<UInt8>, tableID: UInt8) -> ArraySlice<UInt8>? {
        let start = section.startIndex
        guard section.count >= 3, section[start] == tableID else { return nil }
        let length = Int(section[start + 1] & 0x0F) << 8 | Int(section[start + 2])
        guard length >= 9, start + 3 + length <= section.endIndex else { return nil }
        return section[(start + 3)..<(start + 3 + length - 4)]
    }

    /// Where the section of a packet that starts one begins (after the pointer_field), if inside it.
    static func sectionStart(_ bytes: [UInt8], _ packet: TransportStreamPacket) -> Int? {
        guard packet.unitStart, packet.hasPayload, packet.payloadStart < packet.payloadEnd else { return nil }
        let start = packet.payloadStart + 1 + Int(bytes[packet.payloadStart])
        return start < packet.payloadEnd ? start : nil
    }
}
