/// The bytes of a playlist and the reads the parser makes of them: a plain value, so that helpers called from
/// the parser's mutating methods copy nothing (calling a method on the parser itself from one of its mutating
/// methods copies the whole parser in a debug build).
struct PlaylistText {
    let bytes: UnsafeBufferPointer<UInt8>

    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// `range` without leading and trailing spaces and tabs.
    func trimmed(_ range: Range<Int>) -> Range<Int> {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end && isSpaceOrTab(bytes[start]) { start += 1 }
        while end > start && isSpaceOrTab(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    func bytesEqual(_ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var left = lhs.lowerBound
        var right = rhs.lowerBound
        while left < lhs.upperBound {
            if bytes[left] != bytes[right] { return false }
            left += 1
            right += 1
        }
        return true
    }

    /// Up to 40 characters of `range`, for messages.
    func excerpt(_ range: Range<Int>) -> String {
        let limit = 40
        if range.count <= limit { return string(range) }
        var end = range.lowerBound + limit
        while end > range.lowerBound && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return string(range.lowerBound..<end) + "…"
    }

    /// The index of the name in `table` matching `name`, exactly or ignoring ASCII case.
    func match(_ name: Range<Int>, _ table: AttributeTable) -> (index: Int, exact: Bool)? {
        let length = name.count
        guard length > 0 else { return nil }
        let first = bytes[name.lowerBound]
        let firstUpper = first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") ? first - 32 : first
        var caseInsensitiveMatch: Int?
        var index = 0
        while index < table.names.count {
            defer { index += 1 }
            let candidate = table.names[index]
            guard candidate.count == length, candidate[0] == firstUpper else { continue }
            var exact = true
            var folded = true
            var offset = 0
            while offset < length {
                let byte = bytes[name.lowerBound + offset]
                if byte != candidate[offset] {
                    exact = false
                    let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
                    if upper != candidate[offset] {
                        folded = false
                        break
                    }
                }
                offset += 1
            }
            if exact { return (index, true) }
            if folded && caseInsensitiveMatch == nil { caseInsensitiveMatch = index }
        }
        return caseInsensitiveMatch.map { ($0, false) }
    }
}

func isSpaceOrTab(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

/// Word-at-a-time byte searches (eight bytes per step; the lowest flagged byte of a word is always a true match).
enum WordScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The index of the first byte below 0x20 (a control character, LF among them) in `from ..< end`, or `end`.
    static func firstControlCharacter(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            while index + 8 <= end {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                let flagged = (word &- ones &* 0x20) & ~word & highBits
                if flagged != 0 { return index + flagged.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < end && bytes[index] >= 0x20 { index += 1 }
        return index
    }

    /// The index of the first `byte` in `from ..< end`, or `end`.
    static func first(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let pattern = ones &* UInt64(byte)
            while index + 8 <= end {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) ^ pattern
                let flagged = (word &- ones) & ~word & highBits
                if flagged != 0 { return index + flagged.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < end && bytes[index] != byte { index += 1 }
        return index
    }
}
