import StreamKitCore

/// Writes AMF3 values (Adobe AMF3 specification §3), for the AMF0 avmplus marker and tests.
///
/// Strings repeated within one encoder are written as references; objects and traits are always
/// written inline (a decoder resolves both forms to the same value).
public struct AMF3Encoder: Sendable {
    private var strings: [String: Int] = [:]

    public init() {}

    /// Appends `value` to `buffer`.
    public mutating func encode(_ value: AMF3Value, into buffer: inout ByteBuffer) {
        buffer.writeInteger(value.marker)
        switch value {
        case .undefined, .null, .boolean:
            break
        case .integer(let number):
            writeU29(UInt32(bitPattern: number) & 0x1FFF_FFFF, into: &buffer)
        case .double(let number):
            buffer.writeInteger(number.bitPattern)
        case .string(let text):
            writeString(text, into: &buffer)
        case .xmlDocument(let text), .xml(let text):
            writeInlineBytes(Array(text.utf8), into: &buffer)
        case .date(let milliseconds):
            writeU29(1, into: &buffer)
            buffer.writeInteger(milliseconds.bitPattern)
        case .array(let array):
            writeU29(UInt32(array.dense.count) << 1 | 1, into: &buffer)
            for member in array.associative where !member.name.isEmpty {
                writeString(member.name, into: &buffer)
                encode(member.value, into: &buffer)
            }
            writeString("", into: &buffer)
            for element in array.dense { encode(element, into: &buffer) }
        case .object(let object):
            writeU29(UInt32(object.sealed.count) << 4 | (object.isDynamic ? 0b1011 : 0b0011), into: &buffer)
            writeString(object.className, into: &buffer)
            for member in object.sealed { writeString(member.name, into: &buffer) }
            for member in object.sealed { encode(member.value, into: &buffer) }
            if object.isDynamic {
                for member in object.dynamic where !member.name.isEmpty {
                    writeString(member.name, into: &buffer)
                    encode(member.value, into: &buffer)
                }
                writeString("", into: &buffer)
            }
        case .byteArray(let bytes):
            writeInlineBytes(bytes, into: &buffer)
        case .intVector(let elements, let fixed):
            writeVectorHeader(count: elements.count, fixed: fixed, into: &buffer)
            for element in elements { buffer.writeInteger(element) }
        case .uintVector(let elements, let fixed):
            writeVectorHeader(count: elements.count, fixed: fixed, into: &buffer)
            for element in elements { buffer.writeInteger(element) }
        case .doubleVector(let elements, let fixed):
            writeVectorHeader(count: elements.count, fixed: fixed, into: &buffer)
            for element in elements { buffer.writeInteger(element.bitPattern) }
        case .objectVector(let typeName, let elements, let fixed):
            writeVectorHeader(count: elements.count, fixed: fixed, into: &buffer)
            writeString(typeName, into: &buffer)
            for element in elements { encode(element, into: &buffer) }
        case .dictionary(let dictionary):
            writeU29(UInt32(dictionary.entries.count) << 1 | 1, into: &buffer)
            buffer.writeInteger(UInt8(dictionary.hasWeakKeys ? 1 : 0))
            for entry in dictionary.entries {
                encode(entry.key, into: &buffer)
                encode(entry.value, into: &buffer)
            }
        }
    }

    private mutating func writeString(_ text: String, into buffer: inout ByteBuffer) {
        if !text.isEmpty, let index = strings[text] {
            writeU29(UInt32(index) << 1, into: &buffer)
            return
        }
        if !text.isEmpty { strings[text] = strings.count }
        writeInlineBytes(Array(text.utf8), into: &buffer)
    }

    private func writeInlineBytes(_ bytes: [UInt8], into buffer: inout ByteBuffer) {
        writeU29(UInt32(bytes.count) << 1 | 1, into: &buffer)
        buffer.writeBytes(bytes)
    }

    private func writeVectorHeader(count: Int, fixed: Bool, into buffer: inout ByteBuffer) {
        writeU29(UInt32(count) << 1 | 1, into: &buffer)
        buffer.writeInteger(UInt8(fixed ? 1 : 0))
    }

    /// §1.3.1 U29: values up to 2^29 - 1 in one to four bytes.
    func writeU29(_ value: UInt32, into buffer: inout ByteBuffer) {
        precondition(value < 0x2000_0000, "\(value) does not fit in U29")
        switch value {
        case 0..<0x80:
            buffer.writeInteger(UInt8(value))
        case 0x80..<0x4000:
            buffer.writeInteger(UInt8(value >> 7 | 0x80))
            buffer.writeInteger(UInt8(value & 0x7F))
        case 0x4000..<0x20_0000:
            buffer.writeInteger(UInt8(value >> 14 | 0x80))
            buffer.writeInteger(UInt8(value >> 7 & 0x7F | 0x80))
            buffer.writeInteger(UInt8(value & 0x7F))
        default:
            buffer.writeInteger(UInt8(value >> 22 | 0x80))
            buffer.writeInteger(UInt8(value >> 15 & 0x7F | 0x80))
            buffer.writeInteger(UInt8(value >> 8 & 0x7F | 0x80))
            buffer.writeInteger(UInt8(value & 0xFF))
        }
    }
}
