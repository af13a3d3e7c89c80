/// Where the parts of one 188-byte transport stream packet are (ISO/IEC 13818-1 §2.4.3.2), read
/// from a segment without copying it.
struct TransportStreamPacket: Sendable {
    static let size = 188
    static let syncByte: UInt8 = 0x47

    /// The packet's first byte in the segment.
    let offset: Int
    let pid: UInt16
    /// payload_unit_start_indicator: a PES packet or a section starts in this packet.
    let unitStart: Bool
    /// Where the payload starts in the segment (after the adaptation field); `payloadEnd` when none.
    let payloadStart: Int
    /// The adaptation field's content without its length byte and stuffing (flags and optional
    /// fields), as offsets in the segment; empty when the packet has none or only stuffing.
    let adaptationContent: Range<Int>
    /// Whether the packet carries an adaptation field at all.
    let hasAdaptation: Bool
    let hasPayload: Bool

    var payloadEnd: Int { offset + Self.size }

    /// Reads the packet at `offset`, or `nil` when it has no sync byte or a malformed adaptation field.
    init?(_ bytes: [UInt8], at offset: Int) {
        guard offset + Self.size <= bytes.count, bytes[offset] == Self.syncByte else { return nil }
        self.offset = offset
        pid = UInt16(bytes[offset + 1] & 0x1F) << 8 | UInt16(bytes[offset + 2])
        unitStart = bytes[offset + 1] & 0x40 != 0
        let control = bytes[offset + 3] >> 4 & 0x03
        hasAdaptation = control & 0x02 != 0
        hasPayload = control & 0x01 != 0
        var start = offset + 4
        var content = start..<start
        if hasAdaptation {
            let length = Int(bytes[start])
            guard start + 1 + length <= offset + Self.size else { return nil }
            if length > 0 {
                content = (start + 1)..<(start + 1 + Self.contentLength(bytes, flagsAt: start + 1, limit: length))
            }
            start += 1 + length
        }
        adaptationContent = content
        payloadStart = hasPayload ? start : offset + Self.size
    }

    /// The length of an adaptation field's flags and optional fields (§2.4.3.4), the rest being
    /// stuffing; a field whose flags promise more than `limit` bytes is kept whole.
    private static func contentLength(_ bytes: [UInt8], flagsAt flags: Int, limit: Int) -> Int {
        let value = bytes[flags]
        var length = 1
        if value & 0x10 != 0 { length += 6 }  // PCR
        if value & 0x08 != 0 { length += 6 }  // OPCR
        if value & 0x04 != 0 { length += 1 }  // splice_countdown
        if value & 0x02 != 0, length < limit { length += 1 + Int(bytes[flags + length]) }  // private data
        if value & 0x01 != 0, length < limit { length += 1 + Int(bytes[flags + length]) }  // extension
        if length == 1 && value == 0 { return 0 }
        return min(length, limit)
    }

    /// The packets of `bytes`, which must be a whole number of packets each starting with 0x47.
    static func split(_ bytes: [UInt8]) throws(SampleAESError) -> [TransportStreamPacket] {
        guard !bytes.isEmpty, bytes.count % size == 0 else {
            throw SampleAESError(.notTransportStream, "\(bytes.count) bytes is not a whole number of 188-byte packets")
        }
        var packets: [TransportStreamPacket] = []
        packets.reserveCapacity(bytes.count / size)
        for offset in stride(from: 0, to: bytes.count, by: size) {
            guard let packet = TransportStreamPacket(bytes, at: offset) else {
                throw SampleAESError(.notTransportStream, "no valid packet at byte \(offset)")
            }
            packets.append(packet)
        }
        return packets
    }
}

/// Builds 188-byte packets: header, an adaptation field holding `adaptation` (flags and fields)
/// plus stuffing when needed, then the payload.
enum TransportStreamPacketBuilder {
    /// The payload room of a packet whose adaptation field holds `adaptationCount` content bytes.
    static func room(adaptationCount: Int) -> Int {
        TransportStreamPacket.size - 4 - (adaptationCount > 0 ? 1 + adaptationCount : 0)
    }

    /// Appends one packet. `payload` must fit ``room(adaptationCount:)``; an empty payload makes an
    /// adaptation-only packet.
    static func append(
        pid: UInt16, unitStart: Bool, counter: UInt8, adaptation: ArraySlice<UInt8>, payload: ArraySlice<UInt8>,
        to output: inout [UInt8]
    ) {
        let start = output.count
        let needsAdaptation = !adaptation.isEmpty || payload.count < TransportStreamPacket.size - 4
        output.append(TransportStreamPacket.syncByte)
        output.append((unitStart ? 0x40 : 0) | UInt8(truncatingIfNeeded: pid >> 8) & 0x1F)
        output.append(UInt8(truncatingIfNeeded: pid))
        let control: UInt8 = (needsAdaptation ? 0x20 : 0) | (payload.isEmpty ? 0 : 0x10)
        output.append(control | counter & 0x0F)
        if needsAdaptation {
            let fieldLength = TransportStreamPacket.size - 4 - 1 - payload.count
            output.append(UInt8(fieldLength))
            if fieldLength > 0 {
                if adaptation.isEmpty { output.append(0x00) } else { output += adaptation }
                let stuffing = fieldLength - max(adaptation.count, 1)
                output.append(contentsOf: repeatElement(UInt8(0xFF), count: stuffing))
            }
        }
        output += payload
        assert(output.count - start == TransportStreamPacket.size)
    }
}
