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
    public func match(_ path: String) -> [String: String]? {
        guard path.hasPrefix("/") else { return nil }
        let parts = path == "/" ? [] : path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var captured: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .literal(let text):
                guard index < parts.count, parts[index] == text else { return nil }
            case .parameter(let name):
                guard index < parts.count, !parts[index].isEmpty else { return nil }
                captured[name] = String(parts[index])
            case .rest(let name):
                guard index < parts.count else { return nil }
                captured[name] = parts[index...].joined(separator: "/")
                return captured
            }
        }
        return parts.count == segments.count ? captured : nil
    }
}
