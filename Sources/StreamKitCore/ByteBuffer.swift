/// The byte order of an integer on the wire.
public enum Endianness: Sendable {
    /// Most significant byte first (network order: RTMP, FLV, MPEG-TS).
    case big
    /// Least significant byte first (RTMP message stream ids, some container fields).
    case little
}

/// A growable byte buffer with a read cursor, in the style of SwiftNIO's `ByteBuffer`.
///
/// Writes append at the end; reads consume from the reader index and return `nil` when not
/// enough bytes are readable, leaving the cursor where it was. Decoders built on it report
/// "need more data" by returning `nil`, never by throwing and rewinding.
public struct ByteBuffer: Hashable, Sendable {
    private var storage: [UInt8]
    /// The offset in storage of the next byte to read.
    public private(set) var readerIndex: Int

    /// Creates an empty buffer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 0) {
        storage = []
        storage.reserveCapacity(capacity)
        readerIndex = 0
    }

    /// Creates a buffer whose readable bytes are `bytes`.
    public init(bytes: some Sequence<UInt8>) {
        storage = Array(bytes)
        readerIndex = 0
    }

    /// The number of bytes that can be read.
    public var readableBytes: Int { storage.count - readerIndex }

    /// The readable bytes, without consuming them.
    public var readableBytesView: ArraySlice<UInt8> { storage[readerIndex...] }

    // MARK: Reading

    /// Reads an integer of type `T` in the given byte order, or returns `nil` when too few bytes remain.
    public mutating func readInteger<T: FixedWidthInteger>(
        endianness: Endianness = .big, as type: T.Type = T.self
    ) -> T? {
        guard let value = getInteger(at: 0, endianness: endianness, as: type) else { return nil }
        readerIndex += MemoryLayout<T>.size
        return value
    }

    /// Reads the integer of type `T` that starts `offset` bytes past the reader index, without consuming it.
    public func getInteger<T: FixedWidthInteger>(
        at offset: Int, endianness: Endianness = .big, as type: T.Type = T.self
    ) -> T? {
        getUnsigned(at: offset, width: MemoryLayout<T>.size, endianness: endianness).map { T(truncatingIfNeeded: $0) }
    }

    /// Reads a 24-bit unsigned integer (RTMP and FLV use them for lengths and timestamps).
    public mutating func readUInt24(endianness: Endianness = .big) -> UInt32? {
        guard let value = getUInt24(at: 0, endianness: endianness) else { return nil }
        readerIndex += 3
        return value
    }

    /// Reads a 24-bit unsigned integer `offset` bytes past the reader index, without consuming it.
    public func getUInt24(at offset: Int, endianness: Endianness = .big) -> UInt32? {
        getUnsigned(at: offset, width: 3, endianness: endianness).map { UInt32(truncatingIfNeeded: $0) }
    }

    /// Reads `length` bytes, or returns `nil` when fewer are readable.
    public mutating func readBytes(length: Int) -> [UInt8]? {
        readSlice(length: length).map(Array.init)
    }

    /// Reads `length` bytes as a slice of the storage, or returns `nil` when fewer are readable.
    public mutating func readSlice(length: Int) -> ArraySlice<UInt8>? {
        guard length >= 0, readableBytes >= length else { return nil }
        defer { readerIndex += length }
        return storage[readerIndex..<(readerIndex + length)]
    }

    /// Reads `length` bytes as UTF-8 text; `nil` when too few are readable. Invalid UTF-8 is repaired.
    public mutating func readString(length: Int) -> String? {
        readSlice(length: length).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Returns the byte `offset` bytes past the reader index, without consuming it.
    public func getByte(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < readableBytes else { return nil }
        return storage[readerIndex + offset]
    }

    /// Skips `count` readable bytes; returns `false`, skipping nothing, when fewer are readable.
    @discardableResult
    public mutating func moveReaderIndex(forwardBy count: Int) -> Bool {
        guard count >= 0, readableBytes >= count else { return false }
        readerIndex += count
        return true
    }

    /// Moves the reader index back to `index`, a value earlier read from `readerIndex`.
    public mutating func moveReaderIndex(to index: Int) {
        precondition(index >= 0 && index <= storage.count, "reader index \(index) out of bounds")
        readerIndex = index
    }

    /// Frees the storage of bytes already read, so a long-lived buffer does not grow without bound.
    public mutating func discardReadBytes() {
        guard readerIndex > 0 else { return }
        storage.removeFirst(readerIndex)
        readerIndex = 0
    }

    // MARK: Writing

    /// Appends `value` in the given byte order.
    public mutating func writeInteger<T: FixedWidthInteger>(_ value: T, endianness: Endianness = .big) {
        let width = MemoryLayout<T>.size
        let bits = UInt64(truncatingIfNeeded: value)
        appendUnsigned(bits, width: width, endianness: endianness)
    }

    /// Appends the low 24 bits of `value`.
    public mutating func writeUInt24(_ value: UInt32, endianness: Endianness = .big) {
        precondition(value <= 0xFF_FFFF, "\(value) does not fit in 24 bits")
        appendUnsigned(UInt64(value), width: 3, endianness: endianness)
    }

    /// Appends `bytes`.
    public mutating func writeBytes(_ bytes: some Sequence<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Appends the UTF-8 encoding of `string`, without a length or terminator.
    public mutating func writeString(_ string: String) {
        storage.append(contentsOf: string.utf8)
    }

    /// Appends the readable bytes of another buffer.
    public mutating func writeBuffer(_ other: ByteBuffer) {
        storage.append(contentsOf: other.readableBytesView)
    }

    // MARK: Equality of content

    /// Two buffers are equal when their readable bytes are equal, wherever their cursors stand.
    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        lhs.readableBytesView == rhs.readableBytesView
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(readableBytes)
        for byte in readableBytesView { hasher.combine(byte) }
    }

    // MARK: Private

    private func getUnsigned(at offset: Int, width: Int, endianness: Endianness) -> UInt64? {
        guard offset >= 0, readableBytes - offset >= width else { return nil }
        let start = readerIndex + offset
        var value: UInt64 = 0
        switch endianness {
        case .big:
            for index in start..<(start + width) { value = value << 8 | UInt64(storage[index]) }
        case .little:
            for index in (start..<(start + width)).reversed() { value = value << 8 | UInt64(storage[index]) }
        }
        return value
    }

    private mutating func appendUnsigned(_ value: UInt64, width: Int, endianness: Endianness) {
        switch endianness {
        case .big:
            for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
                storage.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        case .little:
            for shift in stride(from: 0, to: width * 8, by: 8) {
                storage.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
    }
}

extension ByteBuffer: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: UInt8...) { self.init(bytes: elements) }
}
