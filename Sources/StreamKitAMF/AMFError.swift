import StreamKitCore

/// Why AMF bytes could not be decoded, with the offset (from the start of the decoded bytes) where it went wrong.
///
/// Errors compare equal by kind (`AMFError.truncated(offset: 0) == error`), wherever they happened.
public struct AMFError: KindedError {
    package enum Kind: Hashable, Sendable {
        case unknownMarker
        case unsupportedType
        case truncated
        case tooDeep
        case badReference
        case tooLarge
        case malformed
    }

    package let kind: Kind
    /// The byte offset of the value that failed, counted from where decoding started.
    public let offset: Int
    /// What was found there.
    public let detail: String

    /// A type marker that no AMF version defines.
    public static func unknownMarker(_ marker: UInt8, offset: Int, version: Int = 0) -> AMFError {
        AMFError(kind: .unknownMarker, offset: offset, detail: "unknown AMF\(version) type marker 0x\(hex(marker))")
    }

    /// A marker the specification reserves or leaves to the application (movieclip, recordset, externalizable).
    public static func unsupportedType(_ name: String, offset: Int) -> AMFError {
        AMFError(kind: .unsupportedType, offset: offset, detail: "unsupported AMF type \(name)")
    }

    /// A complete message ended inside a value.
    public static func truncated(offset: Int) -> AMFError {
        AMFError(kind: .truncated, offset: offset, detail: "the data ends inside a value")
    }

    /// Containers nested deeper than the decoder allows (a guard against stack exhaustion).
    public static func tooDeep(limit: Int, offset: Int) -> AMFError {
        AMFError(kind: .tooDeep, offset: offset, detail: "values nested deeper than \(limit) levels")
    }

    /// A reference to a value that was not decoded before it (or is still being decoded).
    public static func badReference(_ index: Int, available: Int, offset: Int) -> AMFError {
        AMFError(kind: .badReference, offset: offset, detail: "reference to entry \(index) of \(available)")
    }

    /// A value that would expand past the decoder's limits.
    public static func tooLarge(_ what: String, offset: Int) -> AMFError {
        AMFError(kind: .tooLarge, offset: offset, detail: what)
    }

    /// Bytes that do not form the value their marker announces.
    public static func malformed(_ what: String, offset: Int) -> AMFError {
        AMFError(kind: .malformed, offset: offset, detail: what)
    }

    public var description: String { "AMF decoding failed at byte \(offset): \(detail)" }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
