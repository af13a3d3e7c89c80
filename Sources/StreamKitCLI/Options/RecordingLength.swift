import Foundation

/// A length of time from the command line: seconds (`90`, `90s`, `2.5`), units (`45m`, `1h`,
/// `1h30m`, `1h30m15s`), or a clock (`MM:SS`, `HH:MM:SS`, seconds may have a fraction).
struct RecordingLength: Hashable, Sendable, ExpressibleByArgument, CustomStringConvertible {
    /// The length in seconds, more than 0.
    let seconds: Double

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        guard let seconds = text.contains(":") ? Self.clock(text) : Self.units(text), seconds > 0, seconds.isFinite
        else { return nil }
        self.seconds = seconds
    }

    static var valueDescription: String { "a length such as 90, 90s, 45m, 1h30m or 1:30:00" }

    var description: String {
        let whole = Int(seconds.rounded())
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return "\(whole / 3600):\(two(whole / 60 % 60)):\(two(whole % 60))"
    }

    /// `H:MM:SS` or `M:SS`: two or three fields, the last may have a fraction, the others below 60.
    private static func clock(_ text: String) -> Double? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(fields.count), let last = fields.last, let seconds = number(last), seconds < 60 else {
            return nil
        }
        var total = seconds
        var scale = 60.0
        for (position, field) in fields.dropLast().reversed().enumerated() {
            guard !field.isEmpty, field.allSatisfy(\.isASCII), field.allSatisfy(\.isNumber), let value = Double(field)
            else { return nil }
            // Minutes below 60 when hours are given.
            if position == 0 && fields.count == 3 && value >= 60 { return nil }
            total += value * scale
            scale *= 60
        }
        return total
    }

    /// `90`, `90s`, `45m`, `1h30m15s`: numbers each followed by h, m or s, in that order; a bare number is seconds.
    private static func units(_ text: String) -> Double? {
        if let plain = number(Substring(text)) { return plain }
        let order: [Character] = ["h", "m", "s"]
        let factors = [3_600.0, 60, 1]
        var total = 0.0
        var rest = Substring(text)
        var next = 0
        while !rest.isEmpty {
            guard let unitIndex = rest.firstIndex(where: { !$0.isNumber && $0 != "." }),
                let unit = order.firstIndex(of: rest[unitIndex]), unit >= next, let value = number(rest[..<unitIndex])
            else { return nil }
            total += value * factors[unit]
            next = unit + 1
            rest = rest[rest.index(after: unitIndex)...]
        }
        return total
    }

    /// Digits with at most one point.
    private static func number(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else { return nil }
        return Double(text)
    }
}
