/// Percent-decoding of request targets (RFC 3986 §2.1), strict: a `%` must start a valid escape.
enum ServerPercentDecoding {
    /// The bytes `text` stands for, or `nil` when a `%` is not followed by two hex digits.
    ///
    /// - Parameter plusAsSpace: Whether `+` means a space, as in form-encoded query strings.
    static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == 0x25 {
                guard index + 2 < utf8.count, let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
                else { return nil }
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(plusAsSpace && byte == 0x2B ? 0x20 : byte)
                index += 1
            }
        }
        return result
    }

    /// The decoded text, or `nil` when an escape is malformed or the bytes are not UTF-8.
    static func decodeString(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String? {
        guard let bytes = decode(text, plusAsSpace: plusAsSpace) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
