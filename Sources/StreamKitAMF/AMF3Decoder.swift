import StreamKitCore

/// Reads AMF3 values (Adobe AMF3 specification §3) from a ``ByteBuffer``, resolving string,
/// object and trait references.
///
/// References may repeat a large value many times; ``maximumNodes`` bounds the values a decode may
/// produce, counting each resolved reference by the size of what it repeats, so that a small
/// hostile input cannot expand into an enormous tree. A reference to a value still being decoded
/// (a cycle) cannot be represented by value types and is rejected.
public struct AMF3Decoder: Sendable {
    /// How deep arrays, objects, vectors and dictionaries may nest.
    public var maximumDepth: Int
    /// How many values (after resolving references) one decode may produce.
    public var maximumNodes: Int

    public init(maximumDepth: Int = 64, maximumNodes: Int = 1_000_000) {
        self.maximumDepth = maximumDepth
        self.maximumNodes = maximumNodes
    }

    /// Decodes one value.
    ///
    /// - Returns: The value, or `nil` when more bytes are needed (the cursor is then unchanged).
    /// - Throws: ``AMFError`` when the bytes are not AMF3.
    public func decode(from buffer: inout ByteBuffer) throws(AMFError) -> AMF3Value? {
        var reader = Reader(buffer: buffer, decoder: self, baseOffset: 0)
        guard let value = try reader.nextValue() else { return nil }
        buffer = reader.buffer
        return value
    }

    /// Decodes every value in `bytes`, which must hold whole values only; the reference tables
    /// span the whole sequence.
    ///
    /// - Throws: ``AMFError``, including ``AMFError/truncated(offset:)`` when the bytes end inside a value.
    public func decodeAll(_ bytes: some Sequence<UInt8>) throws(AMFError) -> [AMF3Value] {
        var reader = Reader(buffer: ByteBuffer(bytes: bytes), decoder: self, baseOffset: 0)
        return try reader.allValues()
    }
}

extension AMF3Decoder {
    /// Class name, sealed member names and flags shared by objects of one class (§3.12).
    private struct Traits {
        var className: String
        var sealedNames: [String]
        var isDynamic: Bool
    }

    /// One decoding pass: the cursor and the three reference tables (§2.2 of the AMF3 specification).
    struct Reader: AMFValueReader {
        var buffer: ByteBuffer
        let decoder: AMF3Decoder
        private let start: Int
        private let baseOffset: Int
        private var strings: [String] = []
        /// Complex values in the order they were begun; `nil` while one is still being decoded.
        private var objects: [(value: AMF3Value?, nodes: Int)] = []
        private var traits: [Traits] = []
        private var nodes = 0

        init(buffer: ByteBuffer, decoder: AMF3Decoder, baseOffset: Int) {
            self.buffer = buffer
            self.decoder = decoder
            self.baseOffset = baseOffset
            start = buffer.readerIndex
        }

        var offset: Int { baseOffset + buffer.readerIndex - start }

        mutating func value(depth: Int) throws(ReadFailure) -> AMF3Value {
            let valueOffset = offset
            guard depth <= decoder.maximumDepth else {
                throw .failed(.tooDeep(limit: decoder.maximumDepth, offset: valueOffset))
            }
            try count(1, at: valueOffset)
            let marker: UInt8 = try read()
            switch marker {
            case 0x00: return .undefined
            case 0x01: return .null
            case 0x02: return .boolean(false)
            case 0x03: return .boolean(true)
            case 0x04:
                let raw = try u29()
                return .integer(raw & 0x1000_0000 != 0 ? Int32(raw) - 0x2000_0000 : Int32(raw))
            case 0x05:
                return .double(Double(bitPattern: try read()))
            case 0x06:
                return .string(try string())
            case 0x07, 0x0B:
                let header = try u29()
                if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
                let text = try bytes(Int(header >> 1))
                let value: AMF3Value =
                    marker == 0x07
                    ? .xmlDocument(String(decoding: text, as: UTF8.self)) : .xml(String(decoding: text, as: UTF8.self))
                objects.append((value, 1))
                return value
            case 0x08:
                let header = try u29()
                if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
                let value = AMF3Value.date(millisecondsSince1970: Double(bitPattern: try read()))
                objects.append((value, 1))
                return value
            case 0x09:
                let header = try u29()
                if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
                return try complex(at: valueOffset) { reader throws(ReadFailure) in
                    let denseCount = Int(header >> 1)
                    var array = AMF3Array()
                    while true {
                        let name = try reader.string()
                        if name.isEmpty { break }
                        array.associative.append(AMF3Member(name: name, value: try reader.value(depth: depth + 1)))
                    }
                    try reader.requireAtLeast(denseCount)
                    array.dense.reserveCapacity(denseCount)
                    for _ in 0..<denseCount { array.dense.append(try reader.value(depth: depth + 1)) }
                    return .array(array)
                }
            case 0x0A:
                return try object(at: valueOffset, depth: depth)
            case 0x0C:
                let header = try u29()
                if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
                let value = AMF3Value.byteArray(try bytes(Int(header >> 1)))
                objects.append((value, 1))
                return value
            case 0x0D, 0x0E, 0x0F, 0x10:
                return try vector(marker: marker, at: valueOffset, depth: depth)
            case 0x11:
                let header = try u29()
                if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
                return try complex(at: valueOffset) { reader throws(ReadFailure) in
                    let entryCount = Int(header >> 1)
                    let weak: UInt8 = try reader.read()
                    try reader.requireAtLeast(entryCount * 2)
                    var dictionary = AMF3Dictionary(hasWeakKeys: weak & 1 != 0)
                    for _ in 0..<entryCount {
                        let key = try reader.value(depth: depth + 1)
                        dictionary.entries.append(.init(key: key, value: try reader.value(depth: depth + 1)))
                    }
                    return .dictionary(dictionary)
                }
            default:
                throw .failed(.unknownMarker(marker, offset: valueOffset, version: 3))
            }
        }

        private mutating func object(at valueOffset: Int, depth: Int) throws(ReadFailure) -> AMF3Value {
            let header = try u29()
            if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
            let objectTraits: Traits
            if header & 2 == 0 {
                let index = Int(header >> 2)
                guard index < traits.count else {
                    throw .failed(.badReference(index, available: traits.count, offset: valueOffset))
                }
                objectTraits = traits[index]
            } else if header & 4 != 0 {
                let className = try string()
                throw .failed(.unsupportedType("externalizable object '\(className)'", offset: valueOffset))
            } else {
                let sealedCount = Int(header >> 4)
                let className = try string()
                try requireAtLeast(sealedCount)
                var names: [String] = []
                names.reserveCapacity(sealedCount)
                for _ in 0..<sealedCount { names.append(try string()) }
                objectTraits = Traits(className: className, sealedNames: names, isDynamic: header & 8 != 0)
                traits.append(objectTraits)
            }
            return try complex(at: valueOffset) { reader throws(ReadFailure) in
                var object = AMF3Object(className: objectTraits.className, isDynamic: objectTraits.isDynamic)
                for name in objectTraits.sealedNames {
                    object.sealed.append(AMF3Member(name: name, value: try reader.value(depth: depth + 1)))
                }
                if objectTraits.isDynamic {
                    while true {
                        let name = try reader.string()
                        if name.isEmpty { break }
                        object.dynamic.append(AMF3Member(name: name, value: try reader.value(depth: depth + 1)))
                    }
                }
                return .object(object)
            }
        }

        private mutating func vector(marker: UInt8, at valueOffset: Int, depth: Int) throws(ReadFailure) -> AMF3Value {
            let header = try u29()
            if header & 1 == 0 { return try reference(Int(header >> 1), at: valueOffset) }
            let elementCount = Int(header >> 1)
            let fixed: UInt8 = try read()
            return try complex(at: valueOffset) { reader throws(ReadFailure) in
                switch marker {
                case 0x0D:
                    try reader.requireAtLeast(elementCount * 4)
                    var elements: [Int32] = []
                    elements.reserveCapacity(elementCount)
                    for _ in 0..<elementCount { elements.append(try reader.read()) }
                    return .intVector(elements, fixed: fixed != 0)
                case 0x0E:
                    try reader.requireAtLeast(elementCount * 4)
                    var elements: [UInt32] = []
                    elements.reserveCapacity(elementCount)
                    for _ in 0..<elementCount { elements.append(try reader.read()) }
                    return .uintVector(elements, fixed: fixed != 0)
                case 0x0F:
                    try reader.requireAtLeast(elementCount * 8)
                    var elements: [Double] = []
                    elements.reserveCapacity(elementCount)
                    for _ in 0..<elementCount { elements.append(Double(bitPattern: try reader.read())) }
                    return .doubleVector(elements, fixed: fixed != 0)
                default:
                    let typeName = try reader.string()
                    try reader.requireAtLeast(elementCount)
                    var elements: [AMF3Value] = []
                    elements.reserveCapacity(elementCount)
                    for _ in 0..<elementCount { elements.append(try reader.value(depth: depth + 1)) }
                    return .objectVector(typeName: typeName, elements, fixed: fixed != 0)
                }
            }
        }

        /// Registers a complex value before decoding its members (so that member references
        /// count it), then records it with the number of values it holds.
        private mutating func complex(
            at valueOffset: Int, _ body: (inout Reader) throws(ReadFailure) -> AMF3Value
        ) throws(ReadFailure) -> AMF3Value {
            let index = objects.count
            objects.append((nil, 0))
            let before = nodes
            let value = try body(&self)
            objects[index] = (value, nodes - before + 1)
            return value
        }

        private mutating func reference(_ index: Int, at valueOffset: Int) throws(ReadFailure) -> AMF3Value {
            guard index < objects.count, let value = objects[index].value else {
                throw .failed(.badReference(index, available: objects.count, offset: valueOffset))
            }
            try count(objects[index].nodes, at: valueOffset)
            return value
        }

        /// §1.3.1 U29S: a string reference or inline UTF-8; the empty string is never a reference.
        mutating func string() throws(ReadFailure) -> String {
            let stringOffset = offset
            let header = try u29()
            if header & 1 == 0 {
                let index = Int(header >> 1)
                guard index < strings.count else {
                    throw .failed(.badReference(index, available: strings.count, offset: stringOffset))
                }
                return strings[index]
            }
            let text = String(decoding: try bytes(Int(header >> 1)), as: UTF8.self)
            if !text.isEmpty { strings.append(text) }
            return text
        }

        /// §1.3.1 U29: seven bits from each of up to three bytes with the high bit set to continue,
        /// then all eight bits of a fourth.
        private mutating func u29() throws(ReadFailure) -> UInt32 {
            var result: UInt32 = 0
            for _ in 0..<3 {
                let byte: UInt8 = try read()
                if byte & 0x80 == 0 { return result << 7 | UInt32(byte) }
                result = result << 7 | UInt32(byte & 0x7F)
            }
            let last: UInt8 = try read()
            return result << 8 | UInt32(last)
        }

        private mutating func bytes(_ length: Int) throws(ReadFailure) -> [UInt8] {
            guard let bytes = buffer.readBytes(length: length) else { throw .needMoreData }
            return bytes
        }

        /// Counts values against the node budget.
        private mutating func count(_ added: Int, at valueOffset: Int) throws(ReadFailure) {
            nodes += added
            if nodes > decoder.maximumNodes {
                throw .failed(
                    .tooLarge(
                        "more than \(decoder.maximumNodes) values after resolving references", offset: valueOffset))
            }
        }

        /// Fails for want of data when fewer bytes remain than `minimum` elements need: a count
        /// from the wire must not reserve memory the input cannot back.
        private func requireAtLeast(_ minimum: Int) throws(ReadFailure) {
            guard minimum <= buffer.readableBytes else { throw .needMoreData }
        }

        mutating func read<T: FixedWidthInteger>() throws(ReadFailure) -> T {
            guard let value: T = buffer.readInteger() else { throw .needMoreData }
            return value
        }
    }
}
