/// Resolves a URI reference against a base URI (RFC 3986 §5.2), as HLS requires for every URI in a playlist
/// (RFC 8216bis §4.1: relative URIs are relative to the playlist's URI).
///
/// Works on text: nothing is percent-encoded or decoded, so query strings and unusual characters pass through
/// unchanged. The base's query and fragment are never carried into the result unless the reference is empty
/// or only a fragment (RFC 3986 §5.2.2).
///
/// - Parameters:
///   - reference: The URI as written in the playlist.
///   - base: The absolute URI of the playlist (after redirects), such as `https://example.com/a/index.m3u8?t=1`.
/// - Returns: The target URI.
public func resolveURI(_ reference: String, against base: String) -> String {
    let ref = URIComponents(reference)
    if ref.scheme != nil {
        return ref.recomposed(path: removeDotSegments(ref.path))
    }
    let baseParts = URIComponents(base)
    var target = URIComponents(scheme: baseParts.scheme, authority: nil, path: "", query: nil, fragment: ref.fragment)
    if ref.authority != nil {
        target.authority = ref.authority
        target.path = removeDotSegments(ref.path)
        target.query = ref.query
    } else {
        target.authority = baseParts.authority
        if ref.path.isEmpty {
            target.path = baseParts.path
            target.query = ref.query ?? baseParts.query
        } else {
            if ref.path.hasPrefix("/") {
                target.path = removeDotSegments(ref.path)
            } else {
                target.path = removeDotSegments(merge(base: baseParts, referencePath: ref.path))
            }
            target.query = ref.query
        }
    }
    return target.recomposed(path: target.path)
}

/// The five components of a URI reference (RFC 3986 Appendix B), split without validation.
struct URIComponents {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?
}

extension URIComponents {
    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/"), URIComponents.isScheme(rest[..<colon]) {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.dropFirst(2)
            let end = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
            authority = String(afterSlashes[..<end])
            rest = afterSlashes[end...]
        }
        path = String(rest)
    }

    /// RFC 3986 §3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, (first | 0x20) >= UInt8(ascii: "a"), (first | 0x20) <= UInt8(ascii: "z")
        else { return false }
        return text.utf8.allSatisfy { byte in
            let lower = byte | 0x20
            return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || isASCIIDigit(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    /// RFC 3986 §5.3.
    func recomposed(path: String) -> String {
        var result = ""
        if let scheme { result += scheme + ":" }
        if let authority { result += "//" + authority }
        result += path
        if let query { result += "?" + query }
        if let fragment { result += "#" + fragment }
        return result
    }
}

/// RFC 3986 §5.2.3.
private func merge(base: URIComponents, referencePath: String) -> String {
    if base.authority != nil && base.path.isEmpty { return "/" + referencePath }
    guard let slash = base.path.lastIndex(of: "/") else { return referencePath }
    return String(base.path[...slash]) + referencePath
}

/// RFC 3986 §5.2.4.
func removeDotSegments(_ path: String) -> String {
    var input = Substring(path)
    var output: [Substring] = []
    var trailing = ""
    while !input.isEmpty {
        if input.hasPrefix("../") {
            input = input.dropFirst(3)
        } else if input.hasPrefix("./") {
            input = input.dropFirst(2)
        } else if input.hasPrefix("/./") {
            input = input.dropFirst(2)
        } else if input == "/." {
            input = "/"
        } else if input.hasPrefix("/../") {
            input = input.dropFirst(3)
            if !output.isEmpty { output.removeLast() }
        } else if input == "/.." {
            input = "/"
            if !output.isEmpty { output.removeLast() }
        } else if input == "." || input == ".." {
            input = ""
        } else {
            // Move the first segment (with its leading slash, if any) to the output.
            let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
            let end = input[start...].firstIndex(of: "/") ?? input.endIndex
            output.append(input[..<end])
            input = input[end...]
        }
    }
    trailing = output.joined()
    return trailing
}
