import Foundation
import StreamKitCore

/// HTTP dates (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`, written in that IMF-fixdate
/// form and read in it and the two obsolete forms, without a locale-dependent formatter.
public enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate text for `date`, to whole seconds.
    public static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let civil = CivilCalendar.date(days: days)
        let (year, month, day) = (Int(civil.year), Int(civil.month), Int(civil.day))
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        // Built by hand: `String(format:)` costs more than the rest of a small file's response.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        bytes += weekday.utf8
        bytes += [0x2C, 0x20]
        appendDigits(day, count: 2, to: &bytes)
        bytes.append(0x20)
        bytes += months[month - 1].utf8
        bytes.append(0x20)
        appendDigits(year, count: 4, to: &bytes)
        bytes.append(0x20)
        appendDigits(Int(secondOfDay / 3600), count: 2, to: &bytes)
        bytes.append(0x3A)
        appendDigits(Int(secondOfDay % 3600 / 60), count: 2, to: &bytes)
        bytes.append(0x3A)
        appendDigits(Int(secondOfDay % 60), count: 2, to: &bytes)
        bytes += " GMT".utf8
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            _ = buffer.initialize(from: bytes)
            return bytes.count
        }
    }

    /// `value` in decimal, zero-padded to at least `count` digits (as `%0*d` would write it).
    private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(0x2D) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        var digits = 1
        while digits < count || magnitude / divisor >= 10 {
            divisor *= 10
            digits += 1
        }
        while divisor > 0 {
            bytes.append(UInt8(48 + (magnitude / divisor) % 10))
            divisor /= 10
        }
    }

    /// Parses an HTTP date in any of the three forms; `nil` when it is not one.
    public static func parse(_ text: String) -> Date? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?
        var monthName: String?
        var year: Int?
        var time: String?
        switch words.count {
        case 4 where words[3] == "GMT":
            // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT", the date's fields joined by dashes.
            let dateParts = words[1].split(separator: "-").map(String.init)
            if dateParts.count == 3 {
                day = Int(dateParts[0])
                monthName = dateParts[1]
                year = Int(dateParts[2]).map { $0 < 70 ? 2000 + $0 : ($0 < 100 ? 1900 + $0 : $0) }
                time = words[2]
            } else {
                return nil
            }
        case 6 where words[5] == "GMT":
            // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (the comma is a separator).
            day = Int(words[1])
            monthName = words[2]
            year = Int(words[3])
            time = words[4]
        case 5:
            // asctime: "Sun Nov  6 08:49:37 1994"
            monthName = words[1]
            day = Int(words[2])
            time = words[3]
            year = Int(words[4])
        default:
            return nil
        }
        guard let day, let monthName, let year, let time,
            let month = months.firstIndex(of: monthName).map({ $0 + 1 }),
            (1...31).contains(day), (1...9999).contains(year)
        else { return nil }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let days = CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(clock[0] * 3600 + clock[1] * 60 + clock[2])
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
