/// A PES packet's payload in its bytes, and the packets that carry it again once its length changed.
enum PESLayout {
    /// The payload's range in `bytes` (a whole PES packet, ISO/IEC 13818-1 §2.4.3.6) and where the
    /// header ends; `nil` for a PES packet without the optional header (padding, private_stream_2)
    /// or a malformed one.
    static func payload(of bytes: [UInt8]) -> (payload: Range<Int>, headerEnd: Int)? {
        guard bytes.count >= 9, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1, bytes[6] & 0xC0 == 0x80 else {
            return nil
        }
        let headerEnd = 9 + Int(bytes[8])
        let length = Int(bytes[4]) << 8 | Int(bytes[5])
        let end = length == 0 ? bytes.count : min(bytes.count, 6 + length)
        guard headerEnd <= end else { return nil }
        return (headerEnd..<end, headerEnd)
    }

    /// Changes PES_packet_length by `payloadDelta`; one that no longer fits 16 bits becomes 0
    /// (unbounded, which video streams may use).
    static func setLength(of header: inout [UInt8], header end: Int, payloadDelta: Int) {
        let length = Int(header[4]) << 8 | Int(header[5])
        guard length != 0 else { return }
        let new = length + payloadDelta
        let written = new > 0xFFFF || new < end - 6 ? 0 : new
        header[4] = UInt8(written >> 8)
        header[5] = UInt8(written & 0xFF)
    }

    /// Cuts a PES packet into the slots of the packets that carried it before: each keeps its
    /// adaptation field content (PCR, random access) and gets stuffing where the bytes run out.
    /// A slot with no bytes left is dropped, unless its adaptation field has content (a PCR), when
    /// it becomes an adaptation-only packet; bytes left over go in new packets after the last slot.
    ///
    /// - Returns: For each slot (by position in `slots`), the bytes of 0 or more packets.
    static func packetize(
        _ pes: [UInt8], into slots: [TransportStreamPacket], of segment: [UInt8], pid: UInt16
    ) -> [(Int, [UInt8])] {
        var result: [(Int, [UInt8])] = []
        var position = 0
        for (index, slot) in slots.enumerated() {
            var bytes: [UInt8] = []
            let adaptation = segment[slot.adaptationContent]
            let take = min(TransportStreamPacketBuilder.room(adaptationCount: adaptation.count), pes.count - position)
            if take > 0 || !adaptation.isEmpty {
                TransportStreamPacketBuilder.append(
                    pid: pid, unitStart: index == 0 && take > 0, counter: segment[slot.offset + 3] & 0x0F,
                    adaptation: adaptation, payload: pes[position..<(position + take)], to: &bytes)
                position += take
            }
            if index == slots.count - 1 {
                while position < pes.count {
                    let take = min(TransportStreamPacketBuilder.room(adaptationCount: 0), pes.count - position)
                    TransportStreamPacketBuilder.append(
                        pid: pid, unitStart: false, counter: 0, adaptation: [],
                        payload: pes[position..<(position + take)],
                        to: &bytes)
                    position += take
                }
            }
            result.append((index, bytes))
        }
        return result
    }

    /// Numbers the continuity counters of `pids` in order again (§2.4.3.3), from the first packet
    /// of each: packets with a payload count up, adaptation-only ones repeat the last number.
    static func renumberContinuity(_ stream: inout [UInt8], pids: Set<UInt16>) {
        guard !pids.isEmpty else { return }
        var next: [UInt16: UInt8] = [:]
        for offset in stride(from: 0, to: stream.count - TransportStreamPacket.size + 1, by: TransportStreamPacket.size)
        {
            let pid = UInt16(stream[offset + 1] & 0x1F) << 8 | UInt16(stream[offset + 2])
            guard pids.contains(pid) else { continue }
            let original = stream[offset + 3] & 0x0F
            let hasPayload = stream[offset + 3] & 0x10 != 0
            let counter: UInt8
            if hasPayload {
                counter = next[pid] ?? original
                next[pid] = (counter + 1) & 0x0F
            } else {
                counter = next[pid].map { ($0 &- 1) & 0x0F } ?? original
            }
            stream[offset + 3] = stream[offset + 3] & 0xF0 | counter
        }
    }
}
