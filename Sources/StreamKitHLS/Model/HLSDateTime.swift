import Foundation
import StreamKitCore

/// An instant written in a playlist as an ISO 8601 date-time with a time zone (RFC 8216bis §4.4.4.6
/// EXT-X-PROGRAM-DATE-TIME and §4.4.5.1 EXT-X-DATERANGE).
///
/// Kept as whole seconds since 1970, nanoseconds and the UTC offset as written, so that writing it back
/// gives the same instant and the same offset, with no floating-point drift.
public struct HLSDateTime: Hashable, Sendable, CustomStringConvertible {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    public var secondsSince1970: Int64
    /// The fraction of the second, in nanoseconds (`0 ..< 1_000_000_000`).
    public var nanoseconds: Int32
    /// The offset from UTC the text was written in, in minutes; `nil` when it named no time zone (read as UTC).
    public var utcOffsetMinutes: Int16?

    /// Creates an instant from its parts.
    ///
    /// - Parameters:
    ///   - secondsSince1970: Whole seconds since the Unix epoch.
    ///   - nanoseconds: The fraction of the second; values outside `0 ..< 1e9` carry into the seconds.
    ///   - utcOffsetMinutes: The offset to write the instant in; `nil` writes no time zone.
    public init(secondsSince1970: Int64, nanoseconds: Int32 = 0, utcOffsetMinutes: Int16? = 0) {
        var seconds = secondsSince1970
        var fraction = Int64(nanoseconds)
        seconds = seconds &+ fraction / 1_000_000_000
        fraction %= 1_000_000_000
        if fraction < 0 {
            fraction += 1_000_000_000
            seconds = seconds &- 1
        }
        self.secondsSince1970 = seconds
        self.nanoseconds = Int32(fraction)
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    /// Creates an instant from a `Date`, written in UTC.
    public init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        let safeSeconds = Swift.max(Swift.min(seconds, 9.0e15), -9.0e15)
        let nanoseconds = Swift.min(Swift.max(((interval - seconds) * 1e9).rounded(), 0), 999_999_999)
        self.init(secondsSince1970: Int64(safeSeconds), nanoseconds: Int32(nanoseconds), utcOffsetMinutes: 0)
    }

    /// Seconds since 1970 as a floating-point number (loses precision below about a microsecond).
    public var timeIntervalSince1970: Double { Double(secondsSince1970) + Double(nanoseconds) / 1e9 }

    /// The instant as a Foundation `Date`.
    public var date: Date { Date(timeIntervalSince1970: timeIntervalSince1970) }

    /// The instant `seconds` later (earlier when negative), in the same time zone; `nil` when the result
    /// would be more than about 285 years away or `seconds` is not finite.
    ///
    /// Used to extrapolate EXT-X-PROGRAM-DATE-TIME across segments (RFC 8216bis §4.4.4.6).
    public func adding(seconds: Double) -> HLSDateTime? {
        guard seconds.isFinite, abs(seconds) < 9.0e9 else { return nil }
        let delta = Int64((seconds * 1e9).rounded())
        let (sum, overflow) = Int64(nanoseconds).addingReportingOverflow(delta % 1_000_000_000)
        guard !overflow else { return nil }
        let (wholeSeconds, secondsOverflow) = secondsSince1970.addingReportingOverflow(delta / 1_000_000_000)
        guard !secondsOverflow, abs(wholeSeconds) < Int64(1) << 60 else { return nil }
        return HLSDateTime(
            secondsSince1970: wholeSeconds, nanoseconds: Int32(truncatingIfNeeded: sum),
            utcOffsetMinutes: utcOffsetMinutes)
    }

    /// Whether this instant comes before `other`, whatever their time zones.
    public func isBefore(_ other: HLSDateTime) -> Bool {
        (secondsSince1970, nanoseconds) < (other.secondsSince1970, other.nanoseconds)
    }

    /// Whether the two values name the same instant, whatever their time zones (`==` also compares the zones).
    public func isSameInstant(as other: HLSDateTime) -> Bool {
        secondsSince1970 == other.secondsSince1970 && nanoseconds == other.nanoseconds
    }

    /// The canonical text: `YYYY-MM-DDThh:mm:ss.sss` then `Z` or `±hh:mm`, with at least three and at most
    /// nine fraction digits (trailing zeros past the third dropped).
    public var description: String {
        String(decoding: iso8601Bytes(), as: UTF8.self)
    }

    /// Parses ISO 8601 text such as `2019-02-14T02:13:36.106Z` or `2016-06-22T09:20:16.166-04:00`.
    ///
    /// Accepts a `Z` (either case), `±hh:mm`, `±hhmm` or `±hh` zone, or none (read as UTC); up to nine fraction
    /// digits are kept (more are truncated). Returns `nil` for anything else.
    public init?(_ text: String) {
        var text = text
        guard let value = text.withUTF8({ HLSDateTime.parse($0) }) else { return nil }
        self = value
    }

    /// Parses the date-time in `bytes` (see ``init(_:)``).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> HLSDateTime? {
        var reader = DigitReader(bytes: bytes)
        guard let year = reader.number(digits: 4), reader.expect(UInt8(ascii: "-")),
            let month = reader.number(digits: 2), reader.expect(UInt8(ascii: "-")),
            let day = reader.number(digits: 2)
        else { return nil }
        guard reader.expect(UInt8(ascii: "T")) || reader.expect(UInt8(ascii: "t")) else { return nil }
        guard let hour = reader.number(digits: 2), reader.expect(UInt8(ascii: ":")),
            let minute = reader.number(digits: 2), reader.expect(UInt8(ascii: ":")),
            let second = reader.number(digits: 2)
        else { return nil }
        var nanoseconds: Int64 = 0
        if reader.expect(UInt8(ascii: ".")) {
            var digits = 0
            while let digit = reader.digit() {
                if digits < 9 { nanoseconds = nanoseconds * 10 + Int64(digit) }
                digits += 1
            }
            guard digits > 0 else { return nil }
            for _ in Swift.min(digits, 9)..<9 { nanoseconds *= 10 }
        }
        var offset: Int16?
        if reader.expect(UInt8(ascii: "Z")) || reader.expect(UInt8(ascii: "z")) {
            offset = 0
        } else if let sign = reader.sign() {
            guard let hours = reader.number(digits: 2), hours <= 23 else { return nil }
            var minutes: Int64 = 0
            if reader.expect(UInt8(ascii: ":")) {
                guard let value = reader.number(digits: 2) else { return nil }
                minutes = value
            } else if let value = reader.number(digits: 2) {
                minutes = value
            }
            guard minutes <= 59 else { return nil }
            offset = Int16(sign * (hours * 60 + minutes))
        }
        guard reader.isAtEnd else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilCalendar.daysIn(month: month, year: year), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        let local = days * 86_400 + hour * 3_600 + minute * 60 + second
        return HLSDateTime(
            secondsSince1970: local - Int64(offset ?? 0) * 60, nanoseconds: Int32(nanoseconds),
            utcOffsetMinutes: offset)
    }

    /// The canonical text as UTF-8 bytes.
    func iso8601Bytes() -> [UInt8] {
        let offsetSeconds = Int64(utcOffsetMinutes ?? 0) * 60
        let (local, overflow) = secondsSince1970.addingReportingOverflow(offsetSeconds)
        let localSeconds = overflow ? secondsSince1970 : local
        var days = localSeconds / 86_400
        var secondOfDay = localSeconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = CivilCalendar.date(days: days)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        if year < 0 { out.append(UInt8(ascii: "-")) }
        append(abs(year), width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        append(month, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        append(day, width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        append(secondOfDay / 3_600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        append(secondOfDay % 3_600 / 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        var fraction = Int64(nanoseconds)
        var fractionDigits = 9
        while fractionDigits > 3 && fraction % 10 == 0 {
            fraction /= 10
            fractionDigits -= 1
        }
        append(fraction, width: fractionDigits, to: &out)
        if let minutes = utcOffsetMinutes {
            if minutes == 0 {
                out.append(UInt8(ascii: "Z"))
            } else {
                out.append(minutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
                let magnitude = abs(Int64(minutes))
                append(magnitude / 60, width: 2, to: &out)
                out.append(UInt8(ascii: ":"))
                append(magnitude % 60, width: 2, to: &out)
            }
        }
        return out
    }

    private func append(_ value: Int64, width: Int, to out: inout [UInt8]) {
        var digits: [UInt8] = []
        var remaining = value
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        for _ in digits.count..<Swift.max(width, digits.count) { out.append(UInt8(ascii: "0")) }
        out.append(contentsOf: digits.reversed())
    }
}

extension HLSDateTime: Codable {
    /// Decodes the ISO 8601 text written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = HLSDateTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date: \(text)")
        }
        self = value
    }

    /// Encodes the canonical ISO 8601 text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Reads fixed-width digit groups from ISO 8601 text.
private struct DigitReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var isAtEnd: Bool { index == bytes.count }

    mutating func digit() -> Int64? {
        guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else {
            return nil
        }
        defer { index += 1 }
        return Int64(bytes[index] - UInt8(ascii: "0"))
    }

    mutating func number(digits: Int) -> Int64? {
        let start = index
        var value: Int64 = 0
        for _ in 0..<digits {
            guard let digit = digit() else {
                index = start
                return nil
            }
            value = value * 10 + digit
        }
        return value
    }

    mutating func expect(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func sign() -> Int64? {
        if expect(UInt8(ascii: "+")) { return 1 }
        if expect(UInt8(ascii: "-")) { return -1 }
        return nil
    }
}
