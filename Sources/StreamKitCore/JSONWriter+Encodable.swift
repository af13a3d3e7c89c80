import Foundation

extension JSONWriter {
    /// What ``encode(_:options:)`` decides where `Encodable` leaves the form open.
    public struct EncodingOptions: Sendable {
        /// Each object's members in the order of their keys' UTF-8 bytes, as `JSONEncoder`'s
        /// `.sortedKeys` writes them; otherwise in the order the type encodes them.
        public var sortedKeys: Bool
        /// Dates as ISO 8601 text in UTC to the second (`2026-12-02T19:28:52Z`), as `JSONEncoder`'s
        /// `.iso8601` strategy writes them; otherwise as `Date` encodes itself (seconds since 2001).
        public var iso8601Dates: Bool

        /// Options; the defaults are `JSONEncoder`'s.
        public init(sortedKeys: Bool = false, iso8601Dates: Bool = false) {
            self.sortedKeys = sortedKeys
            self.iso8601Dates = iso8601Dates
        }
    }

    /// Writes `value` as its `Encodable` conformance describes it, streaming: objects with their
    /// members in the order the type encodes them, as `JSONEncoder` without `.sortedKeys` would
    /// (a URL as its absolute string; a value that encodes nothing as `{}`).
    ///
    /// Containers are written as they are used, so a type must finish with a nested container
    /// before it writes to the outer one again (as synthesized conformances do). With
    /// ``EncodingOptions/sortedKeys`` an object is reordered when it closes, so the value is
    /// gathered whole before it is handed on: meant for small values, such as one line of a list.
    public mutating func encode(_ value: some Encodable, options: EncodingOptions = EncodingOptions()) throws {
        if options.sortedKeys {
            var whole = JSONWriter(chunkSize: .max) { _ in }
            let state = StreamingEncoderState(writer: whole, options: options)
            try whole.encode(value, state: state)
            json(whole.buffer)
            return
        }
        let state = StreamingEncoderState(writer: self, options: options)
        try encode(value, state: state)
    }

    /// Writes `value` as ``encode(_:options:)`` does, handing its bytes to `emit` in chunks of
    /// about `chunkSize` and the rest at the end: a large document goes to a file without its
    /// whole text in memory.
    public static func encode(_ value: some Encodable, chunkSize: Int, into emit: ([UInt8]) -> Void) throws {
        // The writer does not outlive this call.
        try withoutActuallyEscaping(emit) { output in
            var writer = JSONWriter(chunkSize: chunkSize, output: output)
            try writer.encode(value)
            writer.flush()
        }
    }

    /// A date as ``EncodingOptions/iso8601Dates`` writes it: ISO 8601 text in UTC to the second.
    public mutating func date(_ date: Date) {
        StreamingEncoderState.iso8601(date).withUnsafeBufferPointer { string(utf8: $0) }
    }

    private mutating func encode(_ value: some Encodable, state: StreamingEncoderState) throws {
        // The state now holds the only reference to the buffer, so appending does not copy it.
        buffer = []
        defer { self = state.writer }
        try state.encode(value, depth: 0, codingPath: [])
    }
}

/// The writer and the containers open in it, shared by the encoders and containers of one `encode`.
final class StreamingEncoderState {
    var writer: JSONWriter
    let options: JSONWriter.EncodingOptions
    /// The open containers, outermost first: `true` for an object, `false` for an array.
    private(set) var open: [Bool] = []
    /// With sorted keys, for each open container, where each member of an object begins in the
    /// buffer (after its comma) and its key.
    private var members: [[(key: String, start: Int)]] = []
    /// Values and containers begun so far, to tell whether an encoder wrote anything.
    private(set) var begun = 0

    init(writer: JSONWriter, options: JSONWriter.EncodingOptions) {
        self.writer = writer
        self.options = options
    }

    /// Closes the containers deeper than `depth`.
    func close(to depth: Int) {
        precondition(open.count >= depth, "a container was written to after its parent went on")
        while open.count > depth {
            if open.removeLast() {
                if options.sortedKeys { sortMembers(members.removeLast()) }
                writer.endObject()
            } else {
                if options.sortedKeys { members.removeLast() }
                writer.endArray()
            }
        }
    }

    /// Opens a container at `depth` (closing any deeper one), or returns the one already open there.
    func openContainer(object: Bool, depth: Int) {
        close(to: depth)
        if open.count > depth + 1 { close(to: depth + 1) }
        if open.count == depth + 1 {
            precondition(open[depth] == object, "an object and an array requested of one encoder")
            return
        }
        begun += 1
        open.append(object)
        if options.sortedKeys { members.append([]) }
        if object { writer.beginObject() } else { writer.beginArray() }
    }

    /// Writes the key of a member of the object open at `depth - 1`; its value follows.
    func beginMember(key: String, depth: Int) {
        beginValue(depth: depth)
        if options.sortedKeys, !members.isEmpty {
            members[members.count - 1].append((key, writer.buffer.count + (writer.needsComma ? 1 : 0)))
        }
        writer.key(string: key)
    }

    /// Puts the members of the object being closed in the order of their keys. They are the bytes
    /// from the first one's start to the end of the buffer, separated by commas.
    private func sortMembers(_ members: [(key: String, start: Int)]) {
        guard members.count > 1 else { return }
        let order = members.indices.sorted { members[$0].key.utf8.lexicographicallyPrecedes(members[$1].key.utf8) }
        guard order != Array(members.indices) else { return }
        let end = writer.buffer.count
        var sorted: [UInt8] = []
        sorted.reserveCapacity(end - members[0].start)
        for (position, index) in order.enumerated() {
            if position > 0 { sorted.append(UInt8(ascii: ",")) }
            // A member ends at the comma before the next one, the last at the end of the buffer.
            let memberEnd = index + 1 < members.count ? members[index + 1].start - 1 : end
            sorted.append(contentsOf: writer.buffer[members[index].start..<memberEnd])
        }
        writer.buffer.replaceSubrange(members[0].start..<end, with: sorted)
    }

    /// `date` as `JSONEncoder`'s `.iso8601` strategy writes it, UTC to the second
    /// (`2026-12-02T19:28:52Z`, for years 0–9999), as UTF-8.
    static func iso8601(_ date: Date) -> [UInt8] {
        let seconds = Int64(saturating: date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(days: days)
        var text: [UInt8] = []
        text.reserveCapacity(20)
        func digits(_ value: Int64, _ count: Int, then separator: UInt8?) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / divisor % 10))
                divisor /= 10
            }
            if let separator { text.append(separator) }
        }
        digits(year, 4, then: UInt8(ascii: "-"))
        digits(month, 2, then: UInt8(ascii: "-"))
        digits(day, 2, then: UInt8(ascii: "T"))
        digits(time / 3600, 2, then: UInt8(ascii: ":"))
        digits(time / 60 % 60, 2, then: UInt8(ascii: ":"))
        digits(time % 60, 2, then: UInt8(ascii: "Z"))
        return text
    }

    /// Begins a single value at `depth`.
    func beginValue(depth: Int) {
        close(to: depth)
        begun += 1
    }

    func encode(_ value: some Encodable, depth: Int, codingPath: [any CodingKey]) throws {
        close(to: depth)
        if let url = value as? URL {
            begun += 1
            writer.string(url.absoluteString)
            return
        }
        if options.iso8601Dates, let date = value as? Date {
            begun += 1
            writer.date(date)
            return
        }
        let before = begun
        try value.encode(to: StreamingEncoder(state: self, depth: depth, codingPath: codingPath))
        if begun == before {
            writer.beginObject()
            writer.endObject()
        }
        close(to: depth)
    }
}

/// An `Encoder` writing straight into a ``JSONWriter``.
struct StreamingEncoder: Encoder {
    let state: StreamingEncoderState
    /// How many containers are open outside the value this encoder writes.
    let depth: Int
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.openContainer(object: true, depth: depth)
        return KeyedEncodingContainer(
            StreamingKeyedContainer<Key>(state: state, level: depth + 1, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.openContainer(object: false, depth: depth)
        return StreamingUnkeyedContainer(state: state, level: depth + 1, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StreamingSingleValueContainer(state: state, depth: depth, codingPath: codingPath)
    }
}

/// A string used as a coding key (`super`, array indices).
private struct PlainKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

private struct StreamingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: StreamingEncoderState
    /// How many containers are open, this one included.
    let level: Int
    let codingPath: [any CodingKey]

    private func key(_ key: some CodingKey) {
        state.beginMember(key: key.stringValue, depth: level)
    }

    mutating func encodeNil(forKey key: Key) throws {
        self.key(key)
        state.writer.null()
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        self.key(key)
        state.writer.bool(value)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        self.key(key)
        state.writer.string(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        self.key(key)
        state.writer.double(value)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        self.key(key)
        state.writer.float(value)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { integer(value, key) }

    private func integer(_ value: some BinaryInteger, _ key: Key) {
        self.key(key)
        state.writer.integer(value)
    }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        self.key(key)
        try state.encode(value, depth: level, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        self.key(key)
        state.openContainer(object: true, depth: level)
        return KeyedEncodingContainer(
            StreamingKeyedContainer<NestedKey>(state: state, level: level + 1, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        self.key(key)
        state.openContainer(object: false, depth: level)
        return StreamingUnkeyedContainer(state: state, level: level + 1, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: PlainKey(stringValue: "super")) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(forKey: key as any CodingKey) }

    private func superEncoder(forKey key: any CodingKey) -> any Encoder {
        self.key(key)
        return StreamingEncoder(state: state, depth: level, codingPath: codingPath + [key])
    }
}

private struct StreamingUnkeyedContainer: UnkeyedEncodingContainer {
    let state: StreamingEncoderState
    /// How many containers are open, this one included.
    let level: Int
    let codingPath: [any CodingKey]
    private(set) var count = 0

    init(state: StreamingEncoderState, level: Int, codingPath: [any CodingKey]) {
        self.state = state
        self.level = level
        self.codingPath = codingPath
    }

    private mutating func element() {
        state.beginValue(depth: level)
        count += 1
    }

    mutating func encodeNil() throws {
        element()
        state.writer.null()
    }
    mutating func encode(_ value: Bool) throws {
        element()
        state.writer.bool(value)
    }
    mutating func encode(_ value: String) throws {
        element()
        state.writer.string(value)
    }
    mutating func encode(_ value: Double) throws {
        element()
        state.writer.double(value)
    }
    mutating func encode(_ value: Float) throws {
        element()
        state.writer.float(value)
    }
    mutating func encode(_ value: Int) throws { integer(value) }
    mutating func encode(_ value: Int8) throws { integer(value) }
    mutating func encode(_ value: Int16) throws { integer(value) }
    mutating func encode(_ value: Int32) throws { integer(value) }
    mutating func encode(_ value: Int64) throws { integer(value) }
    mutating func encode(_ value: UInt) throws { integer(value) }
    mutating func encode(_ value: UInt8) throws { integer(value) }
    mutating func encode(_ value: UInt16) throws { integer(value) }
    mutating func encode(_ value: UInt32) throws { integer(value) }
    mutating func encode(_ value: UInt64) throws { integer(value) }

    private mutating func integer(_ value: some BinaryInteger) {
        element()
        state.writer.integer(value)
    }

    mutating func encode(_ value: some Encodable) throws {
        let path = codingPath + [PlainKey(intValue: count)]
        count += 1
        try state.encode(value, depth: level, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        let path = codingPath + [PlainKey(intValue: count)]
        count += 1
        state.openContainer(object: true, depth: level)
        return KeyedEncodingContainer(
            StreamingKeyedContainer<NestedKey>(state: state, level: level + 1, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [PlainKey(intValue: count)]
        count += 1
        state.openContainer(object: false, depth: level)
        return StreamingUnkeyedContainer(state: state, level: level + 1, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [PlainKey(intValue: count)]
        count += 1
        return StreamingEncoder(state: state, depth: level, codingPath: path)
    }
}

private struct StreamingSingleValueContainer: SingleValueEncodingContainer {
    let state: StreamingEncoderState
    let depth: Int
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {
        state.beginValue(depth: depth)
        state.writer.null()
    }
    mutating func encode(_ value: Bool) throws {
        state.beginValue(depth: depth)
        state.writer.bool(value)
    }
    mutating func encode(_ value: String) throws {
        state.beginValue(depth: depth)
        state.writer.string(value)
    }
    mutating func encode(_ value: Double) throws {
        state.beginValue(depth: depth)
        state.writer.double(value)
    }
    mutating func encode(_ value: Float) throws {
        state.beginValue(depth: depth)
        state.writer.float(value)
    }
    mutating func encode(_ value: Int) throws { integer(value) }
    mutating func encode(_ value: Int8) throws { integer(value) }
    mutating func encode(_ value: Int16) throws { integer(value) }
    mutating func encode(_ value: Int32) throws { integer(value) }
    mutating func encode(_ value: Int64) throws { integer(value) }
    mutating func encode(_ value: UInt) throws { integer(value) }
    mutating func encode(_ value: UInt8) throws { integer(value) }
    mutating func encode(_ value: UInt16) throws { integer(value) }
    mutating func encode(_ value: UInt32) throws { integer(value) }
    mutating func encode(_ value: UInt64) throws { integer(value) }

    private func integer(_ value: some BinaryInteger) {
        state.beginValue(depth: depth)
        state.writer.integer(value)
    }

    mutating func encode(_ value: some Encodable) throws {
        try state.encode(value, depth: depth, codingPath: codingPath)
    }
}
