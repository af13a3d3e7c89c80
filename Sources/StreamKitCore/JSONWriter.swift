/// Writes one JSON text (RFC 8259) as UTF-8 bytes into a buffer, handing the buffer to `output`
/// whenever it holds a chunk, so that a large document never sits in memory whole.
///
/// Values are written in document order and the writer puts in the commas; it checks nothing else
/// (a key outside an object, or an array never closed, is the caller's mistake). A chunk always
/// ends between two tokens, so each one is valid UTF-8 on its own.
///
/// Strings are escaped as RFC 8259 §7 requires (quotation mark, reverse solidus and control
/// characters; everything else, `/` and non-ASCII included, is written as it is). Numbers: integers
/// in decimal; doubles in their shortest form that reads back as the same double, without a
/// trailing `.0` (as `JSONEncoder` writes them); `null` for NaN and infinities, which JSON cannot
/// represent.
public struct JSONWriter {
    // The methods are inlinable so that the commands writing large documents get them specialized
    // and inlined (a call per byte written would dominate).

    /// The bytes written since the last flush.
    @usableFromInline var buffer: [UInt8] = []
    @usableFromInline let chunkSize: Int
    @usableFromInline let output: ([UInt8]) -> Void
    /// Whether the next key or value follows an element of the same object or array.
    @usableFromInline var needsComma = false

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - chunkSize: How many bytes to gather before handing them to `output` (a chunk may pass it
    ///     by the size of the last token written).
    ///   - output: Receives each chunk, in order.
    @inlinable public init(chunkSize: Int = 65_536, output: @escaping ([UInt8]) -> Void) {
        self.chunkSize = max(chunkSize, 1)
        self.output = output
        // A writer that gathers a whole value (`chunkSize: .max`, ``bytes(of:)``) is most often
        // small: it grows as it needs.
        buffer.reserveCapacity(chunkSize == .max ? 256 : min(self.chunkSize, 1 << 20) + 1_024)
    }

    /// Hands what is buffered to `output` (call it once the document is complete).
    @inlinable public mutating func flush() {
        guard !buffer.isEmpty else { return }
        output(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: Structure

    /// Ends a top-level value of a JSON Lines stream with a newline: the next value begins a new
    /// line, with no comma before it.
    @inlinable public mutating func lineBreak() {
        buffer.append(UInt8(ascii: "\n"))
        needsComma = false
        if buffer.count >= chunkSize { flush() }
    }

    /// `{`: the object's keys and values follow, then ``endObject()``.
    @inlinable public mutating func beginObject() {
        separate()
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// `}`.
    @inlinable public mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
        finishValue()
    }

    /// `[`: the array's values follow, then ``endArray()``.
    @inlinable public mutating func beginArray() {
        separate()
        buffer.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// `]`.
    @inlinable public mutating func endArray() {
        buffer.append(UInt8(ascii: "]"))
        finishValue()
    }

    /// The name of the next member of the current object, a literal written as it is (it must need no
    /// escaping: no `"`, `\` or control character); its value follows.
    @inlinable public mutating func key(_ name: StaticString) {
        separate()
        buffer.append(UInt8(ascii: "\""))
        if name.hasPointerRepresentation {
            let bytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            assert(bytes.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
            buffer.append(contentsOf: bytes)
        } else {
            name.withUTF8Buffer { buffer.append(contentsOf: $0) }
        }
        buffer.append(UInt8(ascii: "\""))
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// The name of the next member of the current object, when it is not a literal; its value follows.
    @inlinable public mutating func key(string name: String) {
        separate()
        appendQuoted(name)
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// A string.
    @inlinable public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        finishValue()
    }

    /// A value already written as JSON, copied as it is (see ``bytes(of:)``): a value that repeats
    /// from one element to the next is written once and copied.
    @inlinable public mutating func json(_ value: [UInt8]) {
        separate()
        buffer.append(contentsOf: value)
        finishValue()
    }

    /// The JSON of the one value `body` writes, for ``json(_:)``.
    @inlinable public static func bytes(of body: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(chunkSize: .max) { _ in }
        body(&writer)
        return writer.buffer
    }

    /// A string given as its UTF-8 bytes.
    @inlinable public mutating func string(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        separate()
        appendQuoted(bytes)
        finishValue()
    }

    /// A string of the lower-case hexadecimal digits of `bytes`, two per byte.
    @inlinable public mutating func hexString(_ bytes: some Sequence<UInt8>) {
        separate()
        buffer.append(UInt8(ascii: "\""))
        for byte in bytes {
            buffer.append(Self.hexDigit(byte >> 4))
            buffer.append(Self.hexDigit(byte & 0x0F))
        }
        buffer.append(UInt8(ascii: "\""))
        finishValue()
    }

    /// An integer.
    @inlinable public mutating func integer(_ value: some BinaryInteger) {
        separate()
        if let small = UInt64(exactly: value) {
            appendDigits(small)
        } else if let negative = Int64(exactly: value) {
            buffer.append(UInt8(ascii: "-"))
            appendDigits(negative.magnitude)
        } else {
            buffer.append(contentsOf: String(value).utf8)
        }
        finishValue()
    }

    /// A double: the shortest text that reads back as `value`; `null` when it is not finite.
    @inlinable public mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        appendShortest(value.description)
        finishValue()
    }

    /// A float: the shortest text that reads back as `value`; `null` when it is not finite.
    @inlinable public mutating func float(_ value: Float) {
        guard value.isFinite else { return null() }
        separate()
        appendShortest(value.description)
        finishValue()
    }

    /// `true` or `false`.
    @inlinable public mutating func bool(_ value: Bool) {
        separate()
        if value { appendASCII("true") } else { appendASCII("false") }
        finishValue()
    }

    /// `null`.
    @inlinable public mutating func null() {
        separate()
        appendASCII("null")
        finishValue()
    }

    // MARK: Members

    /// A member whose value is a string.
    @inlinable public mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    /// A member whose value is an integer.
    @inlinable public mutating func field(_ name: StaticString, _ value: some BinaryInteger) {
        key(name)
        integer(value)
    }

    /// A member whose value is a double.
    @inlinable public mutating func field(_ name: StaticString, _ value: Double) {
        key(name)
        double(value)
    }

    /// A member whose value is `true` or `false`.
    @inlinable public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    // MARK: Bytes

    @inlinable static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &+ value &- 10
    }

    @inlinable mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    @inlinable mutating func separate() {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
    }

    @inlinable mutating func finishValue() {
        needsComma = true
        if buffer.count >= chunkSize { flush() }
    }

    @inlinable mutating func appendQuoted(_ text: String) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { appendQuoted($0) }
        if done == nil { Array(text.utf8).withUnsafeBufferPointer { appendQuoted($0) } }
    }

    /// `"`, the bytes with what RFC 8259 §7 requires escaped, `"`. Runs that need no escaping are
    /// found eight bytes at a time and copied whole.
    @inlinable mutating func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        buffer.append(UInt8(ascii: "\""))
        guard let base = bytes.baseAddress else {
            buffer.append(UInt8(ascii: "\""))
            return
        }
        let count = bytes.count
        var start = 0
        var index = 0
        while index < count {
            if index + 8 <= count,
                !Self.anyNeedsEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
                continue
            }
            let byte = base[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            if start < index {
                buffer.append(contentsOf: UnsafeBufferPointer(start: base + start, count: index - start))
            }
            buffer.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(byte)
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            default:
                appendASCII("u00")
                buffer.append(Self.hexDigit(byte >> 4))
                buffer.append(Self.hexDigit(byte & 0x0F))
            }
            index += 1
            start = index
        }
        if start < count { buffer.append(contentsOf: UnsafeBufferPointer(start: base + start, count: count - start)) }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes of `word` is a control character, `"` or `\\` (a byte below
    /// 0x20, or equal to 0x22 or 0x5C, found without a branch per byte).
    @inlinable static func anyNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs != 0
    }

    @inlinable mutating func appendDigits(_ value: UInt64) {
        if value < 10 {
            buffer.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var remaining = value
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Swift's shortest round-trip text of a floating-point number, less a trailing `.0`; its
    /// exponent form (`1e-07`, `1e+16`) is valid JSON as it is.
    @inlinable mutating func appendShortest(_ text: String) {
        let utf8 = text.utf8
        if utf8.count > 2, utf8.last == UInt8(ascii: "0"), utf8.dropLast().last == UInt8(ascii: ".") {
            buffer.append(contentsOf: utf8.dropLast(2))
        } else {
            buffer.append(contentsOf: utf8)
        }
    }
}
