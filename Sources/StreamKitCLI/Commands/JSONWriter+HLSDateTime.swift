import StreamKitCore
import StreamKitHLS

extension JSONWriter {
    /// A date-time as the string `HLSDateTime.description` gives (`YYYY-MM-DDThh:mm:ss.sss` and the
    /// zone as written), formatted in place: a playlist can have one on each of a million segments.
    mutating func dateTime(_ value: HLSDateTime) {
        let offsetSeconds = Int64(value.utcOffsetMinutes ?? 0) * 60
        let (shifted, overflow) = value.secondsSince1970.addingReportingOverflow(offsetSeconds)
        let local = overflow ? value.secondsSince1970 : shifted
        var days = local / 86_400
        var secondOfDay = local % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = CivilCalendar.date(days: days)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { text in
            var count = 0
            func putByte(_ byte: UInt8) {
                text[count] = byte
                count += 1
            }
            /// `value` in decimal, zero-padded to `width` digits.
            func putNumber(_ value: Int64, width: Int) {
                var digits = 1
                var power: Int64 = 10
                while digits < 19 && value >= power {
                    digits += 1
                    power = power &* 10
                }
                var end = count + max(width, digits)
                var remaining = value
                let start = count
                count = end
                while end > start {
                    end -= 1
                    text[end] = UInt8(ascii: "0") &+ UInt8(remaining % 10)
                    remaining /= 10
                }
            }
            if year < 0 { putByte(UInt8(ascii: "-")) }
            putNumber(abs(year), width: 4)
            putByte(UInt8(ascii: "-"))
            putNumber(month, width: 2)
            putByte(UInt8(ascii: "-"))
            putNumber(day, width: 2)
            putByte(UInt8(ascii: "T"))
            putNumber(secondOfDay / 3_600, width: 2)
            putByte(UInt8(ascii: ":"))
            putNumber(secondOfDay % 3_600 / 60, width: 2)
            putByte(UInt8(ascii: ":"))
            putNumber(secondOfDay % 60, width: 2)
            putByte(UInt8(ascii: "."))
            var fraction = Int64(value.nanoseconds)
            var fractionDigits = 9
            while fractionDigits > 3 && fraction % 10 == 0 {
                fraction /= 10
                fractionDigits -= 1
            }
            putNumber(fraction, width: fractionDigits)
            if let minutes = value.utcOffsetMinutes {
                if minutes == 0 {
                    putByte(UInt8(ascii: "Z"))
                } else {
                    putByte(minutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
                    let magnitude = abs(Int64(minutes))
                    putNumber(magnitude / 60, width: 2)
                    putByte(UInt8(ascii: ":"))
                    putNumber(magnitude % 60, width: 2)
                }
            }
            string(utf8: UnsafeBufferPointer(rebasing: text[..<count]))
        }
    }
}
