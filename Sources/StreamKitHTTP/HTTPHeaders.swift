/// HTTP header fields in the order they arrived, with case-insensitive lookup (RFC 9110 §5).
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// The fields as name-value pairs, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from name-value pairs, keeping their order.
    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// The value of the first field named `name` (any case), or `nil`.
    public subscript(_ name: String) -> String? {
        fields.first { Self.equalNames($0.name, name) }?.value
    }

    /// Every value of fields named `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.equalNames($0.name, name) }.map(\.value)
    }

    /// The values of every field named `name`, split at commas into list members (RFC 9110 §5.6.1).
    ///
    /// Commas inside quoted strings do not split.
    public func listValues(_ name: String) -> [String] {
        values(name).flatMap { Self.splitList($0) }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field named `name` with one holding `value`, where the first one was.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { Self.equalNames($0.name, name) }) {
            fields[index].value = value
            fields.removeAll { Self.equalNames($0.name, name) && $0.value != value }
            if !fields.contains(where: { Self.equalNames($0.name, name) }) { fields.insert((name, value), at: index) }
        } else {
            add(name, value)
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.equalNames($0.name, name) }
    }

    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> { fields.makeIterator() }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { equalNames($0.name, $1.name) && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }

    /// Compares header names ASCII-case-insensitively without allocating.
    package static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        // Contiguous UTF-8 (every native string): compare the bytes directly.
        if let equal = lhs.utf8.withContiguousStorageIfAvailable({ left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<left.count where lowerASCII(left[index]) != lowerASCII(right[index]) {
                    return false
                }
                return true
            }
        }), let equal {
            return equal
        }
        return zip(lhs.utf8, rhs.utf8).allSatisfy { lowerASCII($0) == lowerASCII($1) }
    }

    private static func lowerASCII(_ byte: UInt8) -> UInt8 {
        (byte >= 65 && byte <= 90) ? byte + 32 : byte
    }

    private static func splitList(_ value: String) -> [String] {
        var members: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in value {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quoted {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                current.append(character)
                quoted.toggle()
            } else if character == "," && !quoted {
                members.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        members.append(current)
        return members.map { $0.trimmingHTTPWhitespace() }.filter { !$0.isEmpty }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    public func trimmingHTTPWhitespace() -> String {
        let text = Substring(self)
        guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = text.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(text[first...last])
    }
}
