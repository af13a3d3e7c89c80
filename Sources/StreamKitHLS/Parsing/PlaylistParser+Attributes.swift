import Foundation

/// One `NAME=VALUE` pair of an attribute list, as byte ranges of the line.
struct AttributeSlot {
    var name: Range<Int>
    var value: Range<Int>
    var isQuoted: Bool
}

/// The attribute names one tag defines, in the order of its key enum's raw values.
struct AttributeTable {
    let names: [[UInt8]]
    let displayNames: [String]

    /// A table of `names`; those in `undefined` match nothing, for a tag that leaves out some keys of its enum.
    init(_ names: [String], leavingOut undefined: Set<String> = []) {
        displayNames = names
        self.names = names.map { undefined.contains($0) ? [] : Array($0.utf8) }
    }
}

/// The attributes a tag defines; raw values index ``table``.
protocol AttributeKey: RawRepresentable<Int>, CaseIterable {
    static var table: AttributeTable { get }
}

/// An attribute list matched against a tag's known attributes.
struct Attributes<Key: AttributeKey> {
    var slots: [AttributeSlot?]
    var others: [Attribute] = []

    subscript(key: Key) -> AttributeSlot? { slots[key.rawValue] }
}

extension PlaylistParser {
    // MARK: Attribute lists (RFC 8216bis §4.2)

    /// Reads the attribute list in `range` and matches it against `Key`'s names; unknown attributes are kept
    /// as written in ``Attributes/others``. `table` replaces `Key.table` for a tag that defines fewer of the keys.
    mutating func attributes<Key: AttributeKey>(
        _ range: Range<Int>, _ keys: Key.Type, tag: KnownTag, table: AttributeTable? = nil
    ) throws(ParseFailure) -> Attributes<Key> {
        try scanAttributeList(range, tagName: tag.name)
        let table = table ?? Key.table
        var result = Attributes<Key>(slots: [AttributeSlot?](repeating: nil, count: table.names.count))
        var otherNames: Set<String> = []
        for slot in attributeSlots {
            if let (index, exact) = text.match(slot.name, table) {
                if !exact { warn("attribute name \(text.excerpt(slot.name)) of \(tag.name) is not upper-case") }
                if result.slots[index] != nil {
                    warn("attribute \(table.displayNames[index]) appears twice in \(tag.name); the first is used")
                } else {
                    result.slots[index] = slot
                }
                continue
            }
            checkAttributeName(slot.name, tag: tag)
            let name = text.string(slot.name)
            guard otherNames.insert(name).inserted else {
                warn("attribute \(text.excerpt(slot.name)) appears twice in \(tag.name); the first is used")
                continue
            }
            let value: AttributeValue
            if slot.isQuoted {
                value = .quoted(try substitutedString(slot.value, what: name))
            } else if slot.value.count > 2 && bytes[slot.value.lowerBound] == UInt8(ascii: "0")
                && bytes[slot.value.lowerBound + 1] | 0x20 == UInt8(ascii: "x")
            {
                value = .unquoted(try substitutedString(slot.value, what: name))
            } else {
                value = .unquoted(text.string(slot.value))
            }
            result.others.append(Attribute(name: name, value: value))
        }
        return result
    }

    private mutating func checkAttributeName(_ name: Range<Int>, tag: KnownTag) {
        var hasLowerCase = false
        for index in name {
            let byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") || isASCIIDigit(byte) || byte == UInt8(ascii: "-")
            {
                continue
            }
            if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") {
                hasLowerCase = true
                continue
            }
            warn("attribute name \(text.excerpt(name)) of \(tag.name) has characters outside A-Z, 0-9 and -")
            return
        }
        if hasLowerCase { warn("attribute name \(text.excerpt(name)) of \(tag.name) is not upper-case") }
    }

    /// Splits an attribute list into ``attributeSlots``: quoted strings may hold commas; whitespace around names
    /// and values, and empty items, are tolerated with a warning.
    mutating func scanAttributeList(_ range: Range<Int>, tagName: String) throws(ParseFailure) {
        attributeSlots.removeAll(keepingCapacity: true)
        var index = range.lowerBound
        let end = range.upperBound
        var warnedWhitespace = false
        while true {
            var before = index
            while index < end && isSpaceOrTab(bytes[index]) { index += 1 }
            if index > before && !warnedWhitespace {
                warn("whitespace in the attribute list of \(tagName)")
                warnedWhitespace = true
            }
            if index == end {
                if index == range.lowerBound { warn("\(tagName) has an empty attribute list") }
                break
            }
            if bytes[index] == UInt8(ascii: ",") {
                warn("empty item in the attribute list of \(tagName)")
                index += 1
                continue
            }
            let nameStart = index
            while index < end && bytes[index] != UInt8(ascii: "=") && bytes[index] != UInt8(ascii: ",") { index += 1 }
            var nameEnd = index
            while nameEnd > nameStart && isSpaceOrTab(bytes[nameEnd - 1]) { nameEnd -= 1 }
            if nameEnd < index && !warnedWhitespace {
                warn("whitespace in the attribute list of \(tagName)")
                warnedWhitespace = true
            }
            let name = nameStart..<nameEnd
            guard index < end, bytes[index] == UInt8(ascii: "=") else {
                throw failure("attribute \(text.excerpt(name)) of \(tagName) has no value (expected NAME=VALUE)")
            }
            guard !name.isEmpty else { throw failure("an attribute of \(tagName) has no name") }
            index += 1
            before = index
            while index < end && isSpaceOrTab(bytes[index]) { index += 1 }
            if index > before && !warnedWhitespace {
                warn("whitespace in the attribute list of \(tagName)")
                warnedWhitespace = true
            }
            if index < end && bytes[index] == UInt8(ascii: "\"") {
                let valueStart = index + 1
                var close = valueStart
                while close < end && bytes[close] != UInt8(ascii: "\"") { close += 1 }
                guard close < end else {
                    throw failure("unterminated quoted string in attribute \(text.excerpt(name)) of \(tagName)")
                }
                attributeSlots.append(AttributeSlot(name: name, value: valueStart..<close, isQuoted: true))
                index = close + 1
                before = index
                while index < end && isSpaceOrTab(bytes[index]) { index += 1 }
                if index > before && !warnedWhitespace {
                    warn("whitespace in the attribute list of \(tagName)")
                    warnedWhitespace = true
                }
                guard index == end || bytes[index] == UInt8(ascii: ",") else {
                    throw failure("unexpected text after the quoted value of \(text.excerpt(name)) in \(tagName)")
                }
            } else {
                let valueStart = index
                var sawQuote = false
                while index < end && bytes[index] != UInt8(ascii: ",") {
                    if bytes[index] == UInt8(ascii: "\"") { sawQuote = true }
                    index += 1
                }
                var valueEnd = index
                while valueEnd > valueStart && isSpaceOrTab(bytes[valueEnd - 1]) { valueEnd -= 1 }
                if valueEnd < index && !warnedWhitespace {
                    warn("whitespace in the attribute list of \(tagName)")
                    warnedWhitespace = true
                }
                if sawQuote {
                    throw failure("the unquoted value of \(text.excerpt(name)) in \(tagName) holds a double quote")
                }
                attributeSlots.append(AttributeSlot(name: name, value: valueStart..<valueEnd, isQuoted: false))
            }
            if index == end { break }
            index += 1
            if index == end {
                warn("trailing comma in the attribute list of \(tagName)")
                break
            }
        }
    }

    /// An optional attribute of a metadata tag, read by `read`. One whose value cannot be read is kept as written
    /// among `others`, with a warning, so that the tag itself is kept.
    mutating func optionalAttribute<Value>(
        _ slot: AttributeSlot?, keepingFailuresIn others: inout [Attribute],
        _ read: (inout PlaylistParser, AttributeSlot) throws(ParseFailure) -> Value
    ) -> Value? {
        guard let slot else { return nil }
        do {
            return try read(&self, slot)
        } catch {
            warn(error.diagnostic.reason + "; the attribute is kept as written", line: error.diagnostic.line)
            let value = text.string(slot.value)
            others.append(
                Attribute(name: text.string(slot.name), value: slot.isQuoted ? .quoted(value) : .unquoted(value)))
            return nil
        }
    }

    // MARK: Typed values

    /// A `quoted-string`, after variable substitution; an unquoted value is accepted with a warning.
    mutating func quotedString(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> String {
        if !slot.isQuoted { warn("\(name) should be a quoted string") }
        return try substitutedString(slot.value, what: name)
    }

    /// The bytes of an unquoted value (an enumerated string or a number); a quoted one is accepted with a
    /// warning, unless it holds a comma (which an unquoted value cannot).
    mutating func unquoted(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> Range<Int> {
        if slot.isQuoted {
            if bytes[slot.value].contains(UInt8(ascii: ",")) {
                throw failure("\(name) must not be quoted, and its quoted value holds a comma")
            }
            warn("\(name) should not be quoted")
        }
        return text.trimmed(slot.value)
    }

    /// An `enumerated-string` as text.
    mutating func enumeratedString(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> String {
        text.string(try unquoted(slot, name))
    }

    /// An enumerated string that must be one of `allowed` (compared ignoring case, with a warning when the case
    /// differs); `nil` when it is none of them.
    mutating func enumerated(
        _ slot: AttributeSlot, _ name: String, oneOf allowed: [String]
    ) throws(ParseFailure)
        -> String?
    {
        let word = try enumerated(slot, name, preferring: allowed)
        return allowed.contains(word) ? word : nil
    }

    /// An enumerated string of an open set: one of `known` (case corrected, with a warning), or as written.
    mutating func enumerated(
        _ slot: AttributeSlot, _ name: String, preferring known: [String]
    ) throws(ParseFailure)
        -> String
    {
        let word = text.string(try unquoted(slot, name))
        if known.contains(word) { return word }
        let upper = word.uppercased()
        if known.contains(upper) {
            warn("\(name)=\(word) is not upper-case")
            return upper
        }
        return word
    }

    /// `YES` or `NO`.
    mutating func yesOrNo(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> Bool {
        guard let value = try enumerated(slot, name, oneOf: ["YES", "NO"]) else {
            throw failure("\(name) must be YES or NO, not '\(text.excerpt(slot.value))'")
        }
        return value == "YES"
    }

    /// A `decimal-integer`, or a decimal number where one is due (`BANDWIDTH=1755600.0`, as packagers write),
    /// rounded, with a warning.
    mutating func integerAllowingDecimals(_ range: Range<Int>, _ name: String) -> UInt64? {
        if let value = NumberParsing.decimalInteger(bytes, range) { return value }
        guard let number = NumberParsing.decimalFloat(bytes, range), number.rounded() < 0x1p63 else { return nil }
        let value = UInt64(number.rounded())
        warn("\(name) is a decimal number where an integer is due: '\(text.excerpt(range))'; read as \(value)")
        return value
    }

    /// A `decimal-integer` (a decimal number is rounded, with a warning).
    mutating func integer(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> UInt64 {
        let range = try unquoted(slot, name)
        guard let value = integerAllowingDecimals(range, name) else {
            throw failure("\(name) is not a decimal integer: '\(text.excerpt(range))'")
        }
        return value
    }

    /// A `decimal-integer` that fits in `Int`.
    mutating func int(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> Int {
        let value = try integer(slot, name)
        guard value <= UInt64(Int.max) else { throw failure("\(name) is too large: \(value)") }
        return Int(value)
    }

    /// A `decimal-integer` that fits in `Int64` (byte offsets and lengths).
    mutating func int64(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> Int64 {
        let value = try integer(slot, name)
        guard value <= UInt64(Int64.max) else { throw failure("\(name) is too large: \(value)") }
        return Int64(value)
    }

    /// A `decimal-floating-point`, or a `signed-decimal-floating-point` when `signed`.
    mutating func float(_ slot: AttributeSlot, _ name: String, signed: Bool = false) throws(ParseFailure) -> Double {
        let range = try unquoted(slot, name)
        guard let value = NumberParsing.decimalFloat(bytes, range, allowSign: signed) else {
            throw failure("\(name) is not a \(signed ? "signed " : "")decimal number: '\(text.excerpt(range))'")
        }
        return value
    }

    /// A `hexadecimal-sequence` (after variable substitution), with the number of digits written.
    mutating func hexadecimal(
        _ slot: AttributeSlot, _ name: String
    ) throws(ParseFailure) -> (
        bytes: [UInt8], digits: Int
    ) {
        let range = try unquoted(slot, name)
        let parsed: (bytes: [UInt8], digits: Int)?
        if bytes[range].contains(UInt8(ascii: "{")) {
            var substituted = try substitutedString(range, what: name)
            parsed = substituted.withUTF8 { NumberParsing.hexadecimalSequence($0, 0..<$0.count) }
        } else {
            parsed = NumberParsing.hexadecimalSequence(bytes, range)
        }
        guard let parsed else {
            throw failure("\(name) is not a hexadecimal sequence (0x…): '\(text.excerpt(range))'")
        }
        return parsed
    }

    /// A `decimal-resolution`.
    mutating func resolution(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> Resolution {
        let range = try unquoted(slot, name)
        var separator = range.lowerBound
        while separator < range.upperBound && bytes[separator] != UInt8(ascii: "x") { separator += 1 }
        guard separator < range.upperBound,
            let width = NumberParsing.decimalInteger(bytes, range.lowerBound..<separator),
            let height = NumberParsing.decimalInteger(bytes, (separator + 1)..<range.upperBound),
            width <= UInt64(Int32.max), height <= UInt64(Int32.max)
        else { throw failure("\(name) is not a resolution (WIDTHxHEIGHT): '\(text.excerpt(range))'") }
        return Resolution(width: Int(width), height: Int(height))
    }

    /// A quoted ISO 8601 date-time.
    mutating func dateTime(_ slot: AttributeSlot, _ name: String) throws(ParseFailure) -> HLSDateTime {
        if !slot.isQuoted { warn("\(name) should be a quoted string") }
        let range = text.trimmed(slot.value)
        guard let value = HLSDateTime.parse(UnsafeBufferPointer(rebasing: bytes[range])) else {
            throw failure("\(name) is not an ISO 8601 date-time: '\(text.excerpt(range))'")
        }
        if value.utcOffsetMinutes == nil { warn("\(name) has no time zone; read as UTC") }
        return value
    }

    /// `length[@offset]` (EXT-X-BYTERANGE, and the BYTERANGE attributes of EXT-X-MAP and EXT-X-PART).
    mutating func byteRange(_ range: Range<Int>, _ what: String) throws(ParseFailure) -> SegmentByteRange {
        var at = range.lowerBound
        while at < range.upperBound && bytes[at] != UInt8(ascii: "@") { at += 1 }
        guard let length = NumberParsing.decimalInteger(bytes, range.lowerBound..<at), length <= UInt64(Int64.max)
        else { throw failure("\(what) must be <length>[@<offset>], not '\(text.excerpt(range))'") }
        var offset: Int64?
        if at < range.upperBound {
            guard let value = NumberParsing.decimalInteger(bytes, (at + 1)..<range.upperBound),
                value <= UInt64(Int64.max)
            else { throw failure("\(what) must be <length>[@<offset>], not '\(text.excerpt(range))'") }
            offset = Int64(value)
        }
        return SegmentByteRange(length: Int64(length), offset: offset)
    }

    // MARK: Variable substitution (RFC 8216bis §4.3)

    /// The text of `range` with every `{$name}` replaced by the variable's value.
    ///
    /// - Throws: When a reference names no defined variable, or when substitution produced a new reference
    ///   (such text could not be written back without changing its meaning).
    mutating func substitutedString(_ range: Range<Int>, what: String) throws(ParseFailure) -> String {
        var index = range.lowerBound
        let end = range.upperBound
        while index < end && bytes[index] != UInt8(ascii: "{") { index += 1 }
        guard index < end else { return text.string(range) }
        var output: [UInt8] = []
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range.lowerBound..<index]))
        var substituted = false
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "{"), index + 1 < end, bytes[index + 1] == UInt8(ascii: "$") {
                var nameEnd = index + 2
                while nameEnd < end && isVariableNameByte(bytes[nameEnd]) { nameEnd += 1 }
                if nameEnd > index + 2 && nameEnd < end && bytes[nameEnd] == UInt8(ascii: "}") {
                    let name = text.string((index + 2)..<nameEnd)
                    guard let value = variables[name] else {
                        throw failure("undefined variable {$\(text.excerpt((index + 2)..<nameEnd))} in \(what)")
                    }
                    substitutedBytes += value.utf8.count
                    if substitutedBytes > substitutionLimit {
                        throw failure(
                            "substituting variables in \(what) would produce more than \(substitutionLimit >> 20) MiB in all"
                        )
                    }
                    output.append(contentsOf: value.utf8)
                    substituted = true
                    index = nameEnd + 1
                    continue
                }
            }
            output.append(byte)
            index += 1
        }
        guard substituted else { return text.string(range) }
        if Self.containsVariableReference(output) {
            throw failure("substituting variables in \(what) produced a new variable reference")
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func containsVariableReference(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index] == UInt8(ascii: "{") && bytes[index + 1] == UInt8(ascii: "$") {
                var end = index + 2
                while end < bytes.count && isVariableNameByte(bytes[end]) { end += 1 }
                if end > index + 2 && end < bytes.count && bytes[end] == UInt8(ascii: "}") { return true }
            }
            index += 1
        }
        return false
    }

    /// The value of query parameter `name` of the playlist URL, percent-decoded (EXT-X-DEFINE `QUERYPARAM`).
    func queryParameter(_ name: String) -> String? {
        guard let url = options.playlistURL?.absoluteString, let question = url.firstIndex(of: "?") else {
            return nil
        }
        var query = url[url.index(after: question)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard (parts[0].removingPercentEncoding ?? String(parts[0])) == name else { continue }
            let value = parts.count > 1 ? String(parts[1]) : ""
            return value.removingPercentEncoding ?? value
        }
        return nil
    }
}

func isVariableNameByte(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        || isASCIIDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
}
