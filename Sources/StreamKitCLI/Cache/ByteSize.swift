/// A size from the command line, in bytes: `500M`, `2G`, `1.5g`, `1GiB`, `800MB`, `100000`
/// (k, M, G and T are powers of 1024, as in `--limit-rate`; a trailing `B` or `iB` is allowed).
public struct ByteSize: Hashable, Sendable, ExpressibleByArgument, CustomStringConvertible {
    /// The size in bytes, at least 1.
    public let bytes: Int64

    /// A size of `bytes` bytes.
    public init(bytes: Int64) {
        precondition(bytes > 0)
        self.bytes = bytes
    }

    /// Parses `500M`, `2G`, `1.5g`, `1GiB`, `800MB`, `100000`; `nil` for anything else or under 1 byte.
    public init?(argument: String) {
        var text = Substring(argument)
        if text.lowercased().hasSuffix("ib") {
            text = text.dropLast(2)
        } else if text.count > 1, text.last == "B" || text.last == "b",
            let unit = text.dropLast().last, unit.isLetter
        {
            text = text.dropLast()
        }
        guard let bytes = BinaryMultiple.parse(text, units: "kmgt", below: 9e18) else { return nil }
        self.init(bytes: bytes)
    }

    public static var valueDescription: String { "a size such as 500M or 2G" }

    public var description: String { ByteCountText.format(Double(bytes)) }
}
