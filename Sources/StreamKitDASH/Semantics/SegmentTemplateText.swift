import StreamKitHLS

/// `$RepresentationID$`, `$Number$`, `$Bandwidth$`, `$Time$` and `$$` in a template, with a
/// `%0Nd` width for the numeric ones (§5.3.9.4.4).
public enum SegmentTemplateText {
    public static func expand(
        _ template: String, id: String, bandwidth: Int, number: UInt64? = nil, time: UInt64? = nil
    ) throws(SegmentResolutionError) -> String {
        try Compiled(template, id: id, bandwidth: bandwidth).expand(number: number, time: time)
    }

    /// A template read once for one Representation: literal text, its id and bandwidth in
    /// place, between the `$Number$` and `$Time$` each segment fills in.
    public struct Compiled: Sendable {
        enum Part: Sendable {
            case literal(String)
            case number(width: Int)
            case time(width: Int)
        }

        let parts: [Part]
        let template: String

        public init(_ template: String, id: String, bandwidth: Int) throws(SegmentResolutionError) {
            var parts: [Part] = []
            var literal = ""
            var rest = Substring(template)
            while let dollar = rest.firstIndex(of: "$") {
                literal += rest[..<dollar]
                let afterDollar = rest.index(after: dollar)
                guard let close = rest[afterDollar...].firstIndex(of: "$") else {
                    throw SegmentResolutionError("an unclosed $ in the template \(template)")
                }
                let identifier = rest[afterDollar..<close]
                rest = rest[rest.index(after: close)...]
                if identifier.isEmpty {
                    literal += "$"
                    continue
                }
                let pieces = identifier.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
                let name = pieces[0]
                var width = 1
                if pieces.count == 2 {
                    let format = pieces[1]
                    guard format.hasSuffix("d"), format.hasPrefix("0") || format.count == 1 || format.first!.isNumber,
                        let value = Int(format.dropLast()), (0...32).contains(value)
                    else { throw SegmentResolutionError("the format %\(format) in \(template)") }
                    width = max(1, value)
                }
                switch name {
                case "RepresentationID":
                    guard pieces.count == 1 else { throw SegmentResolutionError("$RepresentationID$ takes no format") }
                    literal += id
                case "Bandwidth":
                    Self.append(UInt64(max(0, bandwidth)), width: width, to: &literal)
                case "Number", "Time":
                    if !literal.isEmpty { parts.append(.literal(literal)) }
                    literal = ""
                    parts.append(name == "Number" ? .number(width: width) : .time(width: width))
                default: throw SegmentResolutionError("the identifier $\(name)$ in \(template)")
                }
            }
            literal += rest
            if !literal.isEmpty { parts.append(.literal(literal)) }
            self.parts = parts
            self.template = template
        }

        /// The text for one segment.
        ///
        /// - Throws: ``SegmentResolutionError`` when the template has `$Number$` or `$Time$` and
        ///   the value is not known.
        public func expand(number: UInt64?, time: UInt64?) throws(SegmentResolutionError) -> String {
            var result = ""
            for part in parts {
                switch part {
                case .literal(let text): result += text
                case .number(let width):
                    guard let number else { throw SegmentResolutionError("$Number$ where no number is known") }
                    Self.append(number, width: width, to: &result)
                case .time(let width):
                    guard let time else { throw SegmentResolutionError("$Time$ where no time is known") }
                    Self.append(time, width: width, to: &result)
                }
            }
            return result
        }

        private static func append(_ value: UInt64, width: Int, to text: inout String) {
            let digits = String(value)
            if digits.utf8.count < width { text += String(repeating: "0", count: width - digits.utf8.count) }
            text += digits
        }
    }
}

/// Segment URLs of a compiled template against a base URL. When the template expands to a
/// plain relative path (no scheme, not from the root, no `.` or `..` segment: the same for
/// every number, since numbers are digits), each URL is the base's directory and the path, as
/// RFC 3986 §5.2 resolves it, without resolving each of a million segments again.
struct TemplateURLResolver {
    let compiled: SegmentTemplateText.Compiled
    let base: String
    let directory: String?

    init(_ compiled: SegmentTemplateText.Compiled, base: String) {
        self.compiled = compiled
        self.base = base
        let probe = resolveURI("x", against: base)
        if let sample = try? compiled.expand(number: 0, time: 0), Self.isPlainRelative(sample),
            probe.hasSuffix("/x"), probe.contains("://")
        {
            directory = String(probe.dropLast())
        } else {
            directory = nil
        }
    }

    func url(number: UInt64, time: UInt64) throws(SegmentResolutionError) -> String {
        let path = try compiled.expand(number: number, time: time)
        return directory.map { $0 + path } ?? resolveURI(path, against: base)
    }

    /// Whether `reference` is a relative path that resolves by appending it to the base's
    /// directory.
    static func isPlainRelative(_ reference: String) -> Bool {
        guard let first = reference.first, first != "/", first != "?", first != "#" else { return false }
        let path = reference.prefix { $0 != "?" && $0 != "#" }
        // A colon in the first segment makes it a scheme.
        guard !path.prefix(while: { $0 != "/" }).contains(":") else { return false }
        return !path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }
    }
}
