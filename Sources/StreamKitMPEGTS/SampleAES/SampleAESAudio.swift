/// AAC (ADTS) and AC-3 / E-AC-3 in SAMPLE-AES (HLS Sample Encryption §2.3): in each audio frame,
/// after the ADTS header (AAC) and a 16-byte clear leader, every whole 16-byte block is encrypted;
/// the last 0 to 15 bytes stay clear. Lengths never change. AC-3 frames carry a CRC over the
/// encrypted bytes, checked after decryption: it tells a wrong key.
enum SampleAESAudio {
    /// The audio syntax of a stream.
    enum Format: Sendable {
        case adts, ac3
    }

    static let clearLeader = 16

    /// Transforms every frame of a PES payload in place. Bytes before a frame's sync word are
    /// skipped to the next one; a frame running past the payload's end is left as it is.
    ///
    /// - Throws: ``SampleAESError`` `checkFailed` when a decrypted AC-3 or E-AC-3 frame that had
    ///   encrypted blocks fails its CRC (ETSI TS 102 366 §7.10).
    static func transform(
        _ payload: inout [UInt8], format: Format, cipher: SampleAESCipher
    ) throws(SampleAESError) {
        var position = 0
        while let frame = nextFrame(payload, from: position, format: format) {
            let start = frame.start + frame.headerLength + clearLeader
            let blocks = max(0, frame.end - start) / 16
            var chain = cipher.chain()
            chain.apply(&payload, start..<(start + blocks * 16))
            if format == .ac3, cipher.direction == .decrypt, blocks > 0,
                crc16(payload[(frame.start + 2)..<frame.end]) != 0
            {
                throw SampleAESError(
                    .checkFailed,
                    "an AC-3 frame of \(frame.end - frame.start) bytes fails its CRC after decryption "
                        + "(wrong key or IV, or a damaged segment)")
            }
            position = frame.end
        }
    }

    /// CRC-16 with the polynomial x^16 + x^15 + x^2 + 1, initial value 0, unreflected: over a whole
    /// AC-3 or E-AC-3 frame after its sync word it is 0 (crc1 and crc2 make it so).
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        }
        return crc
    }

    /// A frame's extent in a payload.
    struct Frame: Equatable {
        var start: Int
        var headerLength: Int
        var end: Int
    }

    /// The next whole frame at or after `index`, or `nil`.
    static func nextFrame(_ bytes: [UInt8], from index: Int, format: Format) -> Frame? {
        var cursor = index
        while cursor + 7 <= bytes.count {
            let frame: Frame? =
                switch format {
                case .adts: adtsFrame(bytes, at: cursor)
                case .ac3: ac3Frame(bytes, at: cursor)
                }
            if let frame {
                return frame.end <= bytes.count ? frame : nil
            }
            cursor += 1
        }
        return nil
    }

    /// An ADTS frame at `index` (ISO/IEC 13818-7 §6.2): a 7-byte header, 9 with a CRC.
    static func adtsFrame(_ bytes: [UInt8], at index: Int) -> Frame? {
        guard bytes[index] == 0xFF, bytes[index + 1] & 0xF6 == 0xF0 else { return nil }
        let headerLength = bytes[index + 1] & 0x01 != 0 ? 7 : 9
        let length =
            Int(bytes[index + 3] & 0x03) << 11 | Int(bytes[index + 4]) << 3 | Int(bytes[index + 5] >> 5)
        guard length >= headerLength else { return nil }
        return Frame(start: index, headerLength: headerLength, end: index + length)
    }

    /// An AC-3 or E-AC-3 sync frame at `index` (ETSI TS 102 366 §4.4.1, §E.1.2): its size from
    /// frmsizecod and fscod, or from frmsiz for E-AC-3 (bsid above 10).
    static func ac3Frame(_ bytes: [UInt8], at index: Int) -> Frame? {
        guard bytes[index] == 0x0B, bytes[index + 1] == 0x77 else { return nil }
        let bsid = bytes[index + 5] >> 3
        if bsid > 10 {
            guard bsid <= 16 else { return nil }
            let words = (Int(bytes[index + 2] & 0x07) << 8 | Int(bytes[index + 3])) + 1
            return Frame(start: index, headerLength: 0, end: index + words * 2)
        }
        let fscod = Int(bytes[index + 4] >> 6)
        let code = Int(bytes[index + 4] & 0x3F)
        guard fscod < 3, code < 38 else { return nil }
        let kilobits = bitRates[code / 2]
        let words: Int
        switch fscod {
        case 0: words = kilobits * 2  // 48 kHz
        case 1: words = kilobits * 1000 * 1536 / 44_100 / 16 + (code & 1)  // 44.1 kHz
        default: words = kilobits * 3  // 32 kHz
        }
        return Frame(start: index, headerLength: 0, end: index + words * 2)
    }

    /// AC-3 bit rates in kbit/s, by frmsizecod / 2.
    private static let bitRates = [
        32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640,
    ]
}
