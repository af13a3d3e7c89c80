/// An entity tag (RFC 9110 §8.8.3): `"xyzzy"` or weak `W/"xyzzy"`.
public struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// The opaque tag without quotes.
    public let opaqueTag: String
    /// Whether the tag is weak (`W/` prefix): equal content, maybe not equal bytes.
    public let isWeak: Bool

    public init(opaqueTag: String, isWeak: Bool = false) {
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// Parses an `ETag` value; `nil` when it is not a quoted tag.
    public init?(headerValue: String) {
        var text = Substring(headerValue.trimmingHTTPWhitespace())
        var weak = false
        if text.hasPrefix("W/") {
            weak = true
            text = text.dropFirst(2)
        }
        guard text.count >= 2, text.first == "\"", text.last == "\"" else { return nil }
        let inner = text.dropFirst().dropLast()
        guard !inner.contains("\"") else { return nil }
        self.init(opaqueTag: String(inner), isWeak: weak)
    }

    /// The header value, quoted, with `W/` when weak.
    public var headerValue: String { (isWeak ? "W/" : "") + "\"\(opaqueTag)\"" }

    public var description: String { headerValue }

    /// Strong comparison (RFC 9110 §8.8.3.2): both strong and equal. What `If-Range` needs,
    /// since a resumed body must come from byte-identical content.
    public func strongMatches(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// Weak comparison: equal tags, weak or not. What `If-None-Match` uses.
    public func weakMatches(_ other: EntityTag) -> Bool { opaqueTag == other.opaqueTag }
}

/// The `If-None-Match` and `If-Match` condition: `*` or a list of entity tags.
public enum EntityTagCondition: Hashable, Sendable {
    /// `*`: any current representation.
    case any
    /// The listed tags.
    case tags([EntityTag])

    /// Parses the header's values (already split into list members); `nil` when none parses.
    public init?(listMembers: [String]) {
        if listMembers.contains("*") {
            self = .any
            return
        }
        let tags = listMembers.compactMap(EntityTag.init(headerValue:))
        guard !tags.isEmpty else { return nil }
        self = .tags(tags)
    }

    /// Whether `current` matches with weak comparison (for `If-None-Match`).
    public func weaklyMatches(_ current: EntityTag) -> Bool {
        switch self {
        case .any: true
        case .tags(let tags): tags.contains { $0.weakMatches(current) }
        }
    }
}
