/// An AMF3 value (Adobe, "AMF 3 Specification", §3), as found in RTMP data and command messages
/// of types 15 and 17 and behind the AMF0 avmplus marker. References are resolved while decoding.
public indirect enum AMF3Value: Hashable, Sendable {
    /// §3.2 undefined-marker 0x00.
    case undefined
    /// §3.3 null-marker 0x01.
    case null
    /// §3.4, §3.5 false-marker 0x02 and true-marker 0x03.
    case boolean(Bool)
    /// §3.6 integer-marker 0x04: a 29-bit signed integer.
    case integer(Int32)
    /// §3.7 double-marker 0x05.
    case double(Double)
    /// §3.8 string-marker 0x06.
    case string(String)
    /// §3.9 xml-doc-marker 0x07 (legacy XMLDocument).
    case xmlDocument(String)
    /// §3.10 date-marker 0x08: milliseconds since 1970-01-01 UTC.
    case date(millisecondsSince1970: Double)
    /// §3.11 array-marker 0x09: named (associative) members and a dense part.
    case array(AMF3Array)
    /// §3.12 object-marker 0x0A.
    case object(AMF3Object)
    /// §3.13 xml-marker 0x0B (E4X XML).
    case xml(String)
    /// §3.14 byte-array-marker 0x0C.
    case byteArray([UInt8])
    /// §3.15 vector-int-marker 0x0D.
    case intVector([Int32], fixed: Bool)
    /// §3.15 vector-uint-marker 0x0E.
    case uintVector([UInt32], fixed: Bool)
    /// §3.15 vector-double-marker 0x0F.
    case doubleVector([Double], fixed: Bool)
    /// §3.15 vector-object-marker 0x10, with the element type name.
    case objectVector(typeName: String, [AMF3Value], fixed: Bool)
    /// §3.16 dictionary-marker 0x11.
    case dictionary(AMF3Dictionary)

    /// The marker byte that introduces the value on the wire.
    public var marker: UInt8 {
        switch self {
        case .undefined: 0x00
        case .null: 0x01
        case .boolean(let value): value ? 0x03 : 0x02
        case .integer: 0x04
        case .double: 0x05
        case .string: 0x06
        case .xmlDocument: 0x07
        case .date: 0x08
        case .array: 0x09
        case .object: 0x0A
        case .xml: 0x0B
        case .byteArray: 0x0C
        case .intVector: 0x0D
        case .uintVector: 0x0E
        case .doubleVector: 0x0F
        case .objectVector: 0x10
        case .dictionary: 0x11
        }
    }
}

/// A named member of an AMF3 array or object.
public struct AMF3Member: Hashable, Sendable {
    public var name: String
    public var value: AMF3Value

    public init(name: String, value: AMF3Value) {
        self.name = name
        self.value = value
    }
}

/// An AMF3 array (§3.11): associative members first on the wire, then the dense elements.
public struct AMF3Array: Hashable, Sendable {
    public var associative: [AMF3Member]
    public var dense: [AMF3Value]

    public init(associative: [AMF3Member] = [], dense: [AMF3Value] = []) {
        self.associative = associative
        self.dense = dense
    }
}

/// An AMF3 object (§3.12): its traits (class name, sealed member names, dynamic) and its members.
public struct AMF3Object: Hashable, Sendable {
    /// The class name; empty for an anonymous object.
    public var className: String
    /// The sealed members, in trait order.
    public var sealed: [AMF3Member]
    /// Whether dynamic members may follow the sealed ones.
    public var isDynamic: Bool
    /// The dynamic members, in wire order.
    public var dynamic: [AMF3Member]

    public init(className: String = "", sealed: [AMF3Member] = [], isDynamic: Bool = true, dynamic: [AMF3Member] = []) {
        self.className = className
        self.sealed = sealed
        self.isDynamic = isDynamic
        self.dynamic = dynamic
    }

    /// The value of the member named `name`, sealed or dynamic.
    public subscript(name: String) -> AMF3Value? {
        (sealed.first { $0.name == name } ?? dynamic.first { $0.name == name })?.value
    }
}

/// An AMF3 dictionary (§3.16): key-value pairs whose keys are any value.
public struct AMF3Dictionary: Hashable, Sendable {
    /// One entry.
    public struct Entry: Hashable, Sendable {
        public var key: AMF3Value
        public var value: AMF3Value

        public init(key: AMF3Value, value: AMF3Value) {
            self.key = key
            self.value = value
        }
    }

    /// Whether the keys are weakly referenced (meaningful to the ActionScript runtime only).
    public var hasWeakKeys: Bool
    public var entries: [Entry]

    public init(hasWeakKeys: Bool = false, entries: [Entry] = []) {
        self.hasWeakKeys = hasWeakKeys
        self.entries = entries
    }
}
