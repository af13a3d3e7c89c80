/// A span of media time, the `--section START-END` of `streamkit download`: times as
/// `[HH:]MM:SS[.ms]` or plain seconds (`4`, `4.5`), either end left out for the start or the end of
/// the stream (`-0:10`, `1:00-`). Times are kept in milliseconds, so that a section written back
/// (``description``) reads as the same section.
public struct TimeSection: Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds from the start; `nil` for the start of the stream.
    public var startMilliseconds: Int64?
    /// Milliseconds from the start; `nil` for the end of the stream.
    public var endMilliseconds: Int64?

    /// Creates a section; an end before the start is refused by ``parse(_:)``, not here.
    public init(startMilliseconds: Int64?, endMilliseconds: Int64?) {
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }

    /// Seconds from the start where the section begins (0 when open).
    public var start: Double { Double(startMilliseconds ?? 0) / 1000 }
    /// Seconds from the start where the section ends; `nil` when open.
    public var end: Double? { endMilliseconds.map { Double($0) / 1000 } }

    /// Why a section does not parse.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `START-END`.
    ///
    /// - Throws: ``ParseError`` naming what is wrong: no `-`, more than one (a negative time), a
    ///   time that is not `[HH:]MM:SS[.ms]` or seconds, both ends missing, an end not after the start.
    public static func parse(_ text: String) throws(ParseError) -> TimeSection {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2 || !parts.contains(where: \.isEmpty) || text.isEmpty else {
            throw ParseError(description: "'\(text)': times cannot be negative")
        }
        guard parts.count == 2 else {
            throw ParseError(description: "'\(text)' is not START-END (such as 0:04-0:10, 4-10, -0:10 or 1:00-)")
        }
        guard !parts[0].isEmpty || !parts[1].isEmpty else {
            throw ParseError(description: "'\(text)' gives neither a start nor an end")
        }
        let start = try parts[0].isEmpty ? nil : milliseconds(parts[0], in: text)
        let end = try parts[1].isEmpty ? nil : milliseconds(parts[1], in: text)
        if let start, let end, end <= start {
            throw ParseError(description: "'\(text)': the end is not after the start")
        }
        return TimeSection(startMilliseconds: start, endMilliseconds: end)
    }

    /// `[HH:]MM:SS[.ms]` or seconds (`4`, `4.5`), in milliseconds (rounded).
    private static func milliseconds(_ time: Substring, in text: String) throws(ParseError) -> Int64 {
        let invalid = ParseError(
            description: "'\(time)' in '\(text)' is not a time ([HH:]MM:SS[.ms], or seconds such as 4 or 4.5)")
        let fields = time.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { throw invalid }
        let last = fields[fields.count - 1]
        let secondsText = last.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        func digits(_ field: Substring, maximum: Int) throws(ParseError) -> Int64 {
            guard !field.isEmpty, field.count <= maximum, field.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int64(field)
            else { throw invalid }
            return value
        }
        var total = try digits(secondsText[0], maximum: fields.count == 1 ? 9 : 2) * 1000
        if fields.count > 1, total >= 60_000 { throw invalid }
        if secondsText.count == 2 {
            let fraction = secondsText[1]
            _ = try digits(fraction, maximum: 9)
            // Rounded to milliseconds: the digits after the third decide only the rounding.
            let padded = fraction + String(repeating: "0", count: max(0, 4 - fraction.count))
            total += (Int64(padded.prefix(4))! + 5) / 10
        }
        if fields.count >= 2 {
            let minutes = try digits(fields[fields.count - 2], maximum: fields.count == 2 ? 9 : 2)
            if fields.count == 3, minutes >= 60 { throw invalid }
            total += minutes * 60_000
        }
        if fields.count == 3 { total += try digits(fields[0], maximum: 6) * 3_600_000 }
        return total
    }

    /// The sections in time order, overlapping or touching ones merged into one.
    public static func merged(_ sections: [TimeSection]) -> [TimeSection] {
        let sorted = sections.sorted { ($0.startMilliseconds ?? 0) < ($1.startMilliseconds ?? 0) }
        var result: [TimeSection] = []
        for section in sorted {
            guard var last = result.last else {
                result.append(section)
                continue
            }
            guard let lastEnd = last.endMilliseconds else { break }
            if (section.startMilliseconds ?? 0) <= lastEnd {
                last.endMilliseconds = section.endMilliseconds.map { max($0, lastEnd) }
                result[result.count - 1] = last
            } else {
                result.append(section)
            }
        }
        return result
    }

    /// `M:SS[.mmm]` (or `H:MM:SS[.mmm]`) at each end given, such as `0:04-0:10` or `1:00-`.
    public var description: String {
        (startMilliseconds.map(Self.clock) ?? "") + "-" + (endMilliseconds.map(Self.clock) ?? "")
    }

    /// `milliseconds` as `M:SS[.mmm]`, or `H:MM:SS[.mmm]` from an hour on.
    static func clock(_ milliseconds: Int64) -> String {
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let seconds = milliseconds / 1000
        let fraction = milliseconds % 1000
        var text = seconds >= 3600 ? "\(seconds / 3600):\(two(seconds / 60 % 60))" : "\(seconds / 60)"
        text += ":" + two(seconds % 60)
        if fraction > 0 {
            var digits = String(String(fraction + 1000).dropFirst())
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text
    }
}
