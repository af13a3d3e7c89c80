/// A transfer rate from the command line, in bytes a second: `500k`, `2M`, `1.5m`, `100000`,
/// `1G` (k, M and G are powers of 1024, as in curl's `--limit-rate`).
public struct TransferRate: Hashable, Sendable, ExpressibleByArgument, CustomStringConvertible {
    /// Bytes a second, at least 1.
    public let bytesPerSecond: Int64

    /// Creates a rate of `bytesPerSecond`.
    public init(bytesPerSecond: Int64) {
        precondition(bytesPerSecond > 0)
        self.bytesPerSecond = bytesPerSecond
    }

    /// Parses `500k`, `2M`, `1.5m`, `100000`, `1G`; `nil` for anything else or a rate under 1 B/s.
    public init?(argument: String) {
        guard let bytes = BinaryMultiple.parse(Substring(argument), units: "kmg", below: 1e15) else { return nil }
        self.init(bytesPerSecond: bytes)
    }

    public static var valueDescription: String { "a rate in bytes a second such as 500k or 2M" }

    public var description: String { ByteCountText.format(Double(bytesPerSecond)) + "/s" }
}

/// A decimal number with an optional unit letter for a power of 1024 (k, m, g, t in either case):
/// the parsing shared by ``TransferRate`` and ``ByteSize``.
enum BinaryMultiple {
    /// `text` as a whole number of bytes: digits and at most one point, then one of `units`
    /// (lower case); `nil` for anything else, under 1, or not below `limit`.
    static func parse(_ text: Substring, units: String, below limit: Double) -> Int64? {
        var text = text
        var multiplier: Double = 1
        if let last = text.last, let index = units.firstIndex(of: Character(last.lowercased())) {
            for _ in 0...units.distance(from: units.startIndex, to: index) { multiplier *= 1024 }
            text = text.dropLast()
        }
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let number = Double(text), number.isFinite
        else { return nil }
        let bytes = (number * multiplier).rounded()
        guard bytes >= 1, bytes < limit else { return nil }
        return Int64(bytes)
    }
}

/// Byte counts for people: `512 B`, `1.5 KB`, `23.4 MB`, `1.02 GB` (powers of 1024).
enum ByteCountText {
    static func format(_ bytes: Double) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = bytes
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(Int(value)) B" }
        let digits = value >= 100 ? 0 : (value >= 10 ? 1 : 2)
        return "\(fixed(value, digits: digits)) \(units[unit])"
    }

    /// `value` with `digits` decimals, without Foundation's locale-dependent formatting.
    static func fixed(_ value: Double, digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((value * scale).rounded())
        guard digits > 0 else { return "\(scaled)" }
        let whole = scaled / Int64(scale)
        var fraction = String(scaled % Int64(scale))
        while fraction.count < digits { fraction = "0" + fraction }
        return "\(whole).\(fraction)"
    }
}
