/// An AMF0 value (Adobe, "Action Message Format -- AMF 0", §2).
public indirect enum AMF0Value: Hashable, Sendable {
    /// §2.2 number-marker 0x00: an IEEE 754 double.
    case number(Double)
    /// §2.3 boolean-marker 0x01.
    case boolean(Bool)
    /// §2.4 string-marker 0x02: UTF-8 of at most 65,535 bytes (longer text is written as a long string).
    case string(String)
    /// §2.5 object-marker 0x03: an anonymous object, its properties in order, ended by §2.11 object-end 0x09.
    case object(AMF0Object)
    /// §2.7 null-marker 0x05.
    case null
    /// §2.8 undefined-marker 0x06.
    case undefined
    /// §2.9 reference-marker 0x07: the index of an earlier object, ECMA array, strict array or typed object.
    case reference(UInt16)
    /// §2.10 ecma-array-marker 0x08: an associative array (the count is a hint; the end marker ends it).
    case ecmaArray(AMF0Object)
    /// §2.12 strict-array-marker 0x0A: an ordinal array.
    case strictArray([AMF0Value])
    /// §2.13 date-marker 0x0B: milliseconds since 1970-01-01 UTC and a time zone (reserved, 0).
    case date(millisecondsSince1970: Double, timeZone: Int16)
    /// §2.14 long-string-marker 0x0C: UTF-8 with a 32-bit length.
    case longString(String)
    /// §2.15 unsupported-marker 0x0D: a value the sender could not serialize.
    case unsupported
    /// §2.17 xml-document-marker 0x0F: XML text with a 32-bit length.
    case xmlDocument(String)
    /// §2.18 typed-object-marker 0x10: an object with a registered class name.
    case typedObject(className: String, AMF0Object)
    /// §3.1 avmplus-object-marker 0x11: the value that follows is AMF3.
    case avmPlus(AMF3Value)

    /// The marker byte that introduces the value on the wire.
    public var marker: UInt8 {
        switch self {
        case .number: 0x00
        case .boolean: 0x01
        case .string: 0x02
        case .object: 0x03
        case .null: 0x05
        case .undefined: 0x06
        case .reference: 0x07
        case .ecmaArray: 0x08
        case .strictArray: 0x0A
        case .date: 0x0B
        case .longString: 0x0C
        case .unsupported: 0x0D
        case .xmlDocument: 0x0F
        case .typedObject: 0x10
        case .avmPlus: 0x11
        }
    }

    /// The number, when the value is one.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The text of a string or long string.
    public var stringValue: String? {
        switch self {
        case .string(let text), .longString(let text): text
        default: nil
        }
    }

    /// The properties of an object, ECMA array or typed object.
    public var objectValue: AMF0Object? {
        switch self {
        case .object(let object), .ecmaArray(let object), .typedObject(_, let object): object
        default: nil
        }
    }

    /// The boolean, when the value is one.
    public var booleanValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }
}

extension AMF0Value: ExpressibleByStringLiteral, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// One named property of an AMF0 object or ECMA array.
public struct AMF0Property: Hashable, Sendable {
    /// The property name (at most 65,535 bytes of UTF-8 on the wire).
    public var name: String
    /// The property value.
    public var value: AMF0Value

    public init(name: String, value: AMF0Value) {
        self.name = name
        self.value = value
    }
}

/// The properties of an AMF0 object, ECMA array or typed object, in wire order.
public struct AMF0Object: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
    /// The properties in the order they are written.
    public var properties: [AMF0Property]

    public init(_ properties: [AMF0Property] = []) { self.properties = properties }

    public init(dictionaryLiteral elements: (String, AMF0Value)...) {
        properties = elements.map { AMF0Property(name: $0.0, value: $0.1) }
    }

    /// The value of the first property named `name`; setting replaces it in place or appends it,
    /// and setting `nil` removes every property of that name.
    public subscript(name: String) -> AMF0Value? {
        get { properties.first { $0.name == name }?.value }
        set {
            if let newValue {
                if let index = properties.firstIndex(where: { $0.name == name }) {
                    properties[index].value = newValue
                } else {
                    properties.append(AMF0Property(name: name, value: newValue))
                }
            } else {
                properties.removeAll { $0.name == name }
            }
        }
    }

    /// The number of properties.
    public var count: Int { properties.count }

    public func makeIterator() -> IndexingIterator<[AMF0Property]> { properties.makeIterator() }
}
