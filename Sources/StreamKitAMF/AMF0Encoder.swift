import StreamKitCore

/// Writes AMF0 values (Adobe AMF0 specification §2).
public enum AMF0Encoder {
    /// Appends `value` to `buffer`.
    ///
    /// A `.string` longer than 65,535 bytes of UTF-8 is written as a long string (§2.14), the only
    /// form that can hold it; property names are cut at a character boundary to 65,535 bytes.
    public static func encode(_ value: AMF0Value, into buffer: inout ByteBuffer) {
        switch value {
        case .number(let number):
            buffer.writeInteger(UInt8(0x00))
            buffer.writeInteger(number.bitPattern)
        case .boolean(let flag):
            buffer.writeInteger(UInt8(0x01))
            buffer.writeInteger(UInt8(flag ? 1 : 0))
        case .string(let text):
            if text.utf8.count > Int(UInt16.max) {
                buffer.writeInteger(UInt8(0x0C))
                writeLongString(text, into: &buffer)
            } else {
                buffer.writeInteger(UInt8(0x02))
                writeShortString(text, into: &buffer)
            }
        case .object(let object):
            buffer.writeInteger(UInt8(0x03))
            writeProperties(object, into: &buffer)
        case .null:
            buffer.writeInteger(UInt8(0x05))
        case .undefined:
            buffer.writeInteger(UInt8(0x06))
        case .reference(let index):
            buffer.writeInteger(UInt8(0x07))
            buffer.writeInteger(index)
        case .ecmaArray(let object):
            buffer.writeInteger(UInt8(0x08))
            buffer.writeInteger(UInt32(truncatingIfNeeded: object.count))
            writeProperties(object, into: &buffer)
        case .strictArray(let elements):
            buffer.writeInteger(UInt8(0x0A))
            buffer.writeInteger(UInt32(truncatingIfNeeded: elements.count))
            for element in elements { encode(element, into: &buffer) }
        case .date(let milliseconds, let timeZone):
            buffer.writeInteger(UInt8(0x0B))
            buffer.writeInteger(milliseconds.bitPattern)
            buffer.writeInteger(timeZone)
        case .longString(let text):
            buffer.writeInteger(UInt8(0x0C))
            writeLongString(text, into: &buffer)
        case .unsupported:
            buffer.writeInteger(UInt8(0x0D))
        case .xmlDocument(let text):
            buffer.writeInteger(UInt8(0x0F))
            writeLongString(text, into: &buffer)
        case .typedObject(let className, let object):
            buffer.writeInteger(UInt8(0x10))
            writeShortString(className, into: &buffer)
            writeProperties(object, into: &buffer)
        case .avmPlus(let embedded):
            buffer.writeInteger(UInt8(0x11))
            var encoder = AMF3Encoder()
            encoder.encode(embedded, into: &buffer)
        }
    }

    /// The bytes of `values` written one after another, as in an RTMP command message.
    public static func encode(_ values: [AMF0Value]) -> [UInt8] {
        var buffer = ByteBuffer()
        for value in values { encode(value, into: &buffer) }
        return Array(buffer.readableBytesView)
    }

    private static func writeProperties(_ object: AMF0Object, into buffer: inout ByteBuffer) {
        for property in object.properties {
            writeShortString(property.name, into: &buffer)
            encode(property.value, into: &buffer)
        }
        buffer.writeInteger(UInt16(0))
        buffer.writeInteger(UInt8(0x09))
    }

    /// A UTF-8 string with a 16-bit length (§1.3 UTF-8), cut at a character boundary to fit.
    static func writeShortString(_ text: String, into buffer: inout ByteBuffer) {
        var utf8 = Array(text.utf8)
        if utf8.count > Int(UInt16.max) {
            var end = Int(UInt16.max)
            while end > 0 && utf8[end] & 0xC0 == 0x80 { end -= 1 }
            utf8 = Array(utf8[..<end])
        }
        buffer.writeInteger(UInt16(utf8.count))
        buffer.writeBytes(utf8)
    }

    private static func writeLongString(_ text: String, into buffer: inout ByteBuffer) {
        let utf8 = text.utf8
        buffer.writeInteger(UInt32(truncatingIfNeeded: utf8.count))
        buffer.writeBytes(utf8)
    }
}
