/// Readers for the numeric value types of RFC 8216bis §4.2, working on bytes without building strings.
enum NumberParsing {
    /// Powers of ten exactly representable as `Double`.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// A `decimal-integer` (`[0-9]+`, at most 2^64 - 1); `nil` when empty, not digits, or out of range.
    static func decimalInteger(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64? {
        guard !range.isEmpty else { return nil }
        var value: UInt64 = 0
        for index in range {
            let byte = bytes[index]
            guard isASCIIDigit(byte) else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// A `decimal-floating-point` (`[0-9.]`, no exponent), or a `signed-decimal-floating-point` when
    /// `allowSign`; correctly rounded, finite. `nil` for anything else.
    static func decimalFloat(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, allowSign: Bool = false
    )
        -> Double?
    {
        var index = range.lowerBound
        let end = range.upperBound
        var negative = false
        if allowSign, index < end, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var sawDot = false
        var sawDigit = false
        var tooManyDigits = false
        while index < end {
            let byte = bytes[index]
            index += 1
            if isASCIIDigit(byte) {
                sawDigit = true
                if mantissa == 0 && byte == UInt8(ascii: "0") {
                    if sawDot { fractionDigits += 1 }
                    continue
                }
                if significantDigits < 19 {
                    mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
                    significantDigits += 1
                    if sawDot { fractionDigits += 1 }
                } else {
                    tooManyDigits = true
                }
            } else if byte == UInt8(ascii: "."), !sawDot {
                sawDot = true
            } else {
                return nil
            }
        }
        guard sawDigit else { return nil }
        var value: Double
        if !tooManyDigits, mantissa < (1 << 53), fractionDigits <= 22 {
            // Both operands are exact, so one IEEE division is correctly rounded.
            value = Double(mantissa) / powersOfTen[fractionDigits]
        } else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            guard let parsed = Double(text) else { return nil }
            value = abs(parsed)
        }
        guard value.isFinite else { return nil }
        return negative ? -value : value
    }

    /// A `hexadecimal-sequence` (`0x` or `0X`, then hexadecimal digits) as bytes, big-endian; an odd digit count
    /// is read as a number with a leading zero. Returns the bytes and the number of digits written.
    static func hexadecimalSequence(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>
    ) -> (
        bytes: [UInt8], digits: Int
    )? {
        guard range.count >= 3, bytes[range.lowerBound] == UInt8(ascii: "0"),
            bytes[range.lowerBound + 1] | 0x20 == UInt8(ascii: "x")
        else { return nil }
        let digits = range.count - 2
        var result: [UInt8] = []
        result.reserveCapacity((digits + 1) / 2)
        var index = range.lowerBound + 2
        var pending: UInt8?
        if digits % 2 == 1 { pending = 0 }
        while index < range.upperBound {
            guard let nibble = hexValue(bytes[index]) else { return nil }
            if let high = pending {
                result.append(high << 4 | nibble)
                pending = nil
            } else {
                pending = nibble
            }
            index += 1
        }
        return (result, digits)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Text for a `decimal-floating-point` (or signed) that reads back as exactly `value`: the shortest
    /// round-tripping digits, in positional notation (never an exponent), integers without a fraction.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = "\(value)"
        guard let exponentIndex = text.firstIndex(where: { $0 == "e" || $0 == "E" }) else { return text }
        // Swift writes large and small magnitudes as d.ddde±x: move the point instead.
        let negative = text.hasPrefix("-")
        let mantissa = text[text.index(text.startIndex, offsetBy: negative ? 1 : 0)..<exponentIndex]
        guard let exponent = Int(text[text.index(after: exponentIndex)...]) else { return text }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let integerDigits = String(parts[0])
        let fractionDigits = parts.count > 1 ? String(parts[1]) : ""
        var digits = integerDigits + fractionDigits
        var pointPosition = integerDigits.count + exponent
        if pointPosition <= 0 {
            digits = String(repeating: "0", count: 1 - pointPosition) + digits
            pointPosition = 1
        } else if pointPosition > digits.count {
            digits += String(repeating: "0", count: pointPosition - digits.count)
        }
        let index = digits.index(digits.startIndex, offsetBy: pointPosition)
        var result = String(digits[..<index])
        var fraction = digits[index...]
        while fraction.last == "0" { fraction = fraction.dropLast() }
        if !fraction.isEmpty { result += "." + fraction }
        return (negative ? "-" : "") + result
    }
}
