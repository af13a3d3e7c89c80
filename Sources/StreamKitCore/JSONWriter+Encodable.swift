import Foundation

extension JSONWriter {
    /// Writes `value` as its `Encodable` conformance describes it, streaming: objects with their
    /// members in the order the type encodes them, as `JSONEncoder` without `.sortedKeys` would
    /// (a URL as its absolute string; a value that encodes nothing as `{}`).
    ///
    /// Containers are written as they are used, so a type must finish with a nested container
    /// before it writes to the outer one again (as synthesized conformances do).
    public mutating func encode(_ value: some Encodable) throws {
        let state = StreamingEncoderState(writer: self)
        // The state now holds the only reference to the buffer, so appending does not copy it.
        buffer = []
        defer { self = state.writer }
        try state.encode(value, depth: 0, codingPath: [])
    }
}

/// The writer and the containers open in it, shared by the encoders and containers of one `encode`.
final class StreamingEncoderState {
    var writer: JSONWriter
    /// The open containers, outermost first: `true` for an object, `false` for an array.
    private(set) var open: [Bool] = []
    /// Values and containers begun so far, to tell whether an encoder wrote anything.
    private(set) var begun = 0

    init(writer: JSONWriter) { self.writer = writer }

    /// Closes the containers deeper than `depth`.
    func close(to depth: Int) {
        precondition(open.count >= depth, "a container was written to after its parent went on")
        while open.count > depth {
            if open.removeLast() { writer.endObject() } else { writer.endArray() }
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
        if object { writer.beginObject() } else { writer.beginArray() }
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
        state.beginValue(depth: level)
        state.writer.key(string: key.stringValue)
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
