/// A path pattern a route answers: literal segments, `:name` for one segment, and a final
/// `*name` for the rest of the path (one or more segments).
///
/// `/library/:id/*path` matches `/library/abc/v1/seg0.ts` with `id` = `abc` and
/// `path` = `v1/seg0.ts`. Matching works on the raw (percent-encoded) path split at `/`, so an
/// encoded `%2F` never creates a segment boundary; captured values stay encoded.
public struct HTTPRoutePattern: Hashable, Sendable, CustomStringConvertible {
    enum Segment: Hashable, Sendable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    let segments: [Segment]
    /// The pattern as written.
    public let description: String

    /// Parses a pattern. A malformed pattern is a programming error and traps.
    public init(_ pattern: String) {
        precondition(pattern.hasPrefix("/"), "a route pattern starts with '/': \(pattern)")
        var segments: [Segment] = []
        let parts = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() where !(parts.count == 1 && part.isEmpty) {
            if part.hasPrefix(":") {
                precondition(part.count > 1, "a parameter needs a name: \(pattern)")
                segments.append(.parameter(String(part.dropFirst())))
            } else if part.hasPrefix("*") {
                precondition(part.count > 1 && index == parts.count - 1, "'*name' must end the pattern: \(pattern)")
                segments.append(.rest(String(part.dropFirst())))
            } else {
                segments.append(.literal(String(part)))
            }
        }
        self.segments = segments
        self.description = pattern
    }

    /// The captured values when `path` (raw, starting with `/`) matches, `nil` otherwise.
    public func match(_ path: String) -> [(name: String, value: String)]? {
        guard path.utf8.first == 0x2F else { return nil }
        return match(segments: Self.segments(of: path))
    }

    /// The raw path's segments: `/a/b` is `a`, `b`; `/` has none; `/a/` ends with an empty one.
    static func segments(of path: String) -> [Substring] {
        guard path.utf8.count > 1 else { return [] }
        var segments: [Substring] = []
        let utf8 = path.utf8
        var start = utf8.index(after: utf8.startIndex)
        var index = start
        while index < utf8.endIndex {
            if utf8[index] == 0x2F {
                segments.append(path[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        segments.append(path[start..<utf8.endIndex])
        return segments
    }

    /// The captured values when the path split into `parts` matches.
    func match(segments parts: [Substring]) -> [(name: String, value: String)]? {
        if case .rest = segments.last {
            guard parts.count >= segments.count else { return nil }
        } else {
            guard parts.count == segments.count else { return nil }
        }
        var captured: [(name: String, value: String)] = []
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .literal(let text):
                guard index < parts.count, parts[index].utf8.elementsEqual(text.utf8) else { return nil }
            case .parameter(let name):
                guard index < parts.count, !parts[index].isEmpty else { return nil }
                captured.append((name, String(parts[index])))
            case .rest(let name):
                guard index < parts.count else { return nil }
                // The rest of the original path, slashes and all, without re-joining.
                let first = parts[index]
                captured.append((name, String(first.base[first.startIndex..<(parts.last?.endIndex ?? first.endIndex)])))
                return captured
            }
        }
        return parts.count == segments.count ? captured : nil
    }
}
