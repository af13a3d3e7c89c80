import StreamKitCore

/// Reads AMF0 values (Adobe AMF0 specification §2) from a ``ByteBuffer``.
///
/// ``decode(from:)`` returns `nil` when the buffer ends inside a value, leaving the cursor where it
/// was, and throws ``AMFError`` for bytes that can never form a value. ``decodeAll(_:)`` reads a
/// complete RTMP command or data message, where running short is itself an error.
public struct AMF0Decoder: Sendable {
    /// How deep objects and arrays may nest before decoding stops (a guard against stack exhaustion).
    public var maximumDepth: Int
    /// Limits for AMF3 values embedded with the avmplus marker.
    public var amf3: AMF3Decoder

    public init(maximumDepth: Int = 64, amf3: AMF3Decoder = AMF3Decoder()) {
        self.maximumDepth = maximumDepth
        self.amf3 = amf3
    }

    /// Decodes one value.
    ///
    /// - Returns: The value, or `nil` when more bytes are needed (the cursor is then unchanged).
    /// - Throws: ``AMFError`` when the bytes are not AMF0.
    public func decode(from buffer: inout ByteBuffer) throws(AMFError) -> AMF0Value? {
        var reader = Reader(buffer: buffer, decoder: self)
        guard let value = try reader.nextValue() else { return nil }
        buffer = reader.buffer
        return value
    }

    /// Decodes every value in `bytes`, which must hold whole values only.
    ///
    /// References (§2.9) count objects across the whole sequence, as in one RTMP command message.
    /// - Throws: ``AMFError``, including ``AMFError/truncated(offset:)`` when the bytes end inside a value.
    public func decodeAll(_ bytes: some Sequence<UInt8>) throws(AMFError) -> [AMF0Value] {
        var reader = Reader(buffer: ByteBuffer(bytes: bytes), decoder: self)
        return try reader.allValues()
    }
}

/// Decoding fails either for want of bytes or for good.
enum ReadFailure: Error {
    case needMoreData
    case failed(AMFError)
}

/// One decoding pass of either AMF version over its own copy of the cursor.
protocol AMFValueReader {
    associatedtype Value
    var buffer: ByteBuffer { get }
    /// Where the cursor is, for messages.
    var offset: Int { get }
    mutating func value(depth: Int) throws(ReadFailure) -> Value
}

extension AMFValueReader {
    /// The next value, or `nil` when the bytes end inside it.
    mutating func nextValue() throws(AMFError) -> Value? {
        do {
            return try value(depth: 0)
        } catch {
            switch error {
            case .needMoreData: return nil
            case .failed(let failure): throw failure
            }
        }
    }

    /// Every value up to the end of the bytes, which must not end inside one.
    mutating func allValues() throws(AMFError) -> [Value] {
        var values: [Value] = []
        while buffer.readableBytes > 0 {
            guard let value = try nextValue() else { throw .truncated(offset: offset) }
            values.append(value)
        }
        return values
    }
}

extension AMF0Decoder {
    /// The state of one decoding pass: a private copy of the cursor and the reference count.
    fileprivate struct Reader: AMFValueReader {
        var buffer: ByteBuffer
        let decoder: AMF0Decoder
        let start: Int
        /// Objects, ECMA arrays, strict arrays and typed objects begun so far (§2.9 reference table).
        var complexCount = 0

        init(buffer: ByteBuffer, decoder: AMF0Decoder) {
            self.buffer = buffer
            self.decoder = decoder
            start = buffer.readerIndex
        }

        var offset: Int { buffer.readerIndex - start }

        mutating func value(depth: Int) throws(ReadFailure) -> AMF0Value {
            let valueOffset = offset
            guard depth <= decoder.maximumDepth else {
                throw .failed(.tooDeep(limit: decoder.maximumDepth, offset: valueOffset))
            }
            let marker: UInt8 = try read()
            switch marker {
            case 0x00:
                return .number(Double(bitPattern: try read()))
            case 0x01:
                let byte: UInt8 = try read()
                return .boolean(byte != 0)
            case 0x02:
                return .string(try shortString())
            case 0x03:
                complexCount += 1
                return .object(try properties(depth: depth))
            case 0x04:
                throw .failed(.unsupportedType("movieclip (0x04)", offset: valueOffset))
            case 0x05:
                return .null
            case 0x06:
                return .undefined
            case 0x07:
                let index: UInt16 = try read()
                guard Int(index) < complexCount else {
                    throw .failed(.badReference(Int(index), available: complexCount, offset: valueOffset))
                }
                return .reference(index)
            case 0x08:
                complexCount += 1
                let _: UInt32 = try read()  // the count is only a hint (§2.10)
                return .ecmaArray(try properties(depth: depth))
            case 0x09:
                throw .failed(.malformed("object-end marker outside an object", offset: valueOffset))
            case 0x0A:
                complexCount += 1
                let count: UInt32 = try read()
                // Each element takes at least one byte: a count beyond the readable bytes cannot be
                // satisfied yet, and must not reserve memory on the sender's word.
                guard Int(count) <= buffer.readableBytes else { throw .needMoreData }
                var elements: [AMF0Value] = []
                elements.reserveCapacity(Int(count))
                for _ in 0..<count { elements.append(try value(depth: depth + 1)) }
                return .strictArray(elements)
            case 0x0B:
                let milliseconds = Double(bitPattern: try read())
                let zone: Int16 = try read()
                return .date(millisecondsSince1970: milliseconds, timeZone: zone)
            case 0x0C:
                return .longString(try longString())
            case 0x0D:
                return .unsupported
            case 0x0E:
                throw .failed(.unsupportedType("recordset (0x0E)", offset: valueOffset))
            case 0x0F:
                return .xmlDocument(try longString())
            case 0x10:
                complexCount += 1
                let className = try shortString()
                return .typedObject(className: className, try properties(depth: depth))
            case 0x11:
                var amf3Reader = AMF3Decoder.Reader(buffer: buffer, decoder: decoder.amf3, baseOffset: offset)
                let embedded = try amf3Reader.value(depth: depth + 1)
                buffer = amf3Reader.buffer
                return .avmPlus(embedded)
            default:
                throw .failed(.unknownMarker(marker, offset: valueOffset))
            }
        }

        /// Name-value pairs up to an empty name and the object-end marker (§2.5, §2.11).
        mutating func properties(depth: Int) throws(ReadFailure) -> AMF0Object {
            var object = AMF0Object()
            while true {
                let name = try shortString()
                if name.isEmpty, buffer.getByte(at: 0) == 0x09 {
                    buffer.moveReaderIndex(forwardBy: 1)
                    return object
                }
                guard buffer.readableBytes > 0 else { throw .needMoreData }
                object.properties.append(AMF0Property(name: name, value: try value(depth: depth + 1)))
            }
        }

        mutating func shortString() throws(ReadFailure) -> String {
            let length: UInt16 = try read()
            guard let text = buffer.readString(length: Int(length)) else { throw .needMoreData }
            return text
        }

        mutating func longString() throws(ReadFailure) -> String {
            let length: UInt32 = try read()
            guard let text = buffer.readString(length: Int(length)) else { throw .needMoreData }
            return text
        }

        mutating func read<T: FixedWidthInteger>() throws(ReadFailure) -> T {
            guard let value: T = buffer.readInteger() else { throw .needMoreData }
            return value
        }
    }
}
