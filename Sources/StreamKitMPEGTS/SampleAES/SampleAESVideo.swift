/// H.264 in SAMPLE-AES (HLS Sample Encryption §2.2): in each NAL unit of type 1 or 5 longer than
/// 48 bytes, after a 32-byte clear leader, one 16-byte block in ten is encrypted (one encrypted,
/// then up to 144 bytes clear; a last 16 bytes or fewer stay clear). Encryption applies to the NAL
/// unit as coded (with its emulation-prevention bytes) and emulation prevention is applied again
/// to the result; decryption removes that emulation prevention first, and the decrypted bytes are
/// the NAL unit as coded.
enum SampleAESVideo {
    /// NAL units shorter than this, and of other types, are clear.
    static let minimumProtectedLength = 49
    static let clearLeader = 32
    static let clearRun = 144

    /// Transforms every protected NAL unit of a PES payload in Annex B byte-stream form; the bytes
    /// between NAL units (start codes) and before the first one are kept.
    static func transform(_ payload: ArraySlice<UInt8>, cipher: SampleAESCipher) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(payload.count + payload.count / 64)
        var position = payload.startIndex
        var unitStart = nextUnitStart(payload, from: position)
        while let start = unitStart {
            output += payload[position..<start]
            let next = nextUnitStart(payload, from: start)
            let end = next.map { boundary(payload, before: $0, after: start) } ?? payload.endIndex
            let unit = payload[start..<end]
            let type = unit.first.map { $0 & 0x1F } ?? 0
            if (type == 1 || type == 5) && unit.count >= minimumProtectedLength {
                output += protect(unit, cipher: cipher)
            } else {
                output += unit
            }
            position = end
            unitStart = next
        }
        output += payload[position...]
        return output
    }

    /// One protected NAL unit (header byte included), encrypted or decrypted.
    static func protect(_ unit: ArraySlice<UInt8>, cipher: SampleAESCipher) -> [UInt8] {
        var bytes = cipher.direction == .decrypt ? removingEmulationPrevention(unit) : Array(unit)
        var chain = cipher.chain()
        var offset = clearLeader
        var remaining = bytes.count - offset
        while remaining > 0 {
            if remaining > 16 {
                chain.apply(&bytes, offset..<(offset + 16))
                offset += 16
                remaining -= 16
            }
            let clear = min(clearRun, remaining)
            offset += clear
            remaining -= clear
        }
        return cipher.direction == .encrypt ? addingEmulationPrevention(bytes[...]) : bytes
    }

    /// Where the NAL unit after the start code found at `code` (its first byte) ends: the start
    /// code's three bytes, and one zero before them (a four-byte start code).
    private static func boundary(_ bytes: ArraySlice<UInt8>, before unit: Int, after start: Int) -> Int {
        let code = unit - 3
        return code - 1 > start && bytes[code - 1] == 0 ? code - 1 : code
    }

    /// The index just after the next `00 00 01` at or after `index`, or `nil`.
    static func nextUnitStart(_ bytes: ArraySlice<UInt8>, from index: Int) -> Int? {
        var zeros = 0
        var cursor = index
        while cursor < bytes.endIndex {
            let byte = bytes[cursor]
            if byte == 1 && zeros >= 2 { return cursor + 1 }
            zeros = byte == 0 ? zeros + 1 : 0
            cursor += 1
        }
        return nil
    }

    /// `bytes` without the 0x03 after each `00 00` that is followed by another byte (H.264 §7.4.1).
    static func removingEmulationPrevention(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var zeros = 0
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if zeros >= 2 && byte == 3 && index + 1 < bytes.endIndex {
                zeros = 0
                index += 1
                continue
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
            index += 1
        }
        return output
    }

    /// `bytes` with 0x03 inserted after each `00 00` followed by a byte of 3 or less.
    static func addingEmulationPrevention(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 256 + 4)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte <= 3 {
                output.append(3)
                zeros = 0
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }
}
