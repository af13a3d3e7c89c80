/// Why AMF bytes could not be decoded, with the offset (from the start of the decoded bytes) where it went wrong.
public struct AMFError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case unknownMarker
        case unsupportedType
        case truncated
        case tooDeep
        case badReference
        case tooLarge
        case malformed
    }

    private let code: Code
    /// The byte offset of the value that failed, counted from where decoding started.
    public let offset: Int
    /// What was found there.
    public let detail: String

    private init(_ code: Code, offset: Int, detail: String) {
        self.code = code
        self.offset = offset
        self.detail = detail
    }

    /// A type marker that no AMF version defines.
    public static func unknownMarker(_ marker: UInt8, offset: Int, version: Int = 0) -> AMFError {
        AMFError(.unknownMarker, offset: offset, detail: "unknown AMF\(version) type marker 0x\(hex(marker))")
    }

    /// A marker the specification reserves or leaves to the application (movieclip, recordset, externalizable).
    public static func unsupportedType(_ name: String, offset: Int) -> AMFError {
        AMFError(.unsupportedType, offset: offset, detail: "unsupported AMF type \(name)")
    }

    /// A complete message ended inside a value.
    public static func truncated(offset: Int) -> AMFError {
        AMFError(.truncated, offset: offset, detail: "the data ends inside a value")
    }

    /// Containers nested deeper than the decoder allows (a guard against stack exhaustion).
    public static func tooDeep(limit: Int, offset: Int) -> AMFError {
        AMFError(.tooDeep, offset: offset, detail: "values nested deeper than \(limit) levels")
    }

    /// A reference to a value that was not decoded before it (or is still being decoded).
    public static func badReference(_ index: Int, available: Int, offset: Int) -> AMFError {
        AMFError(.badReference, offset: offset, detail: "reference to entry \(index) of \(available)")
    }

    /// A value that would expand past the decoder's limits.
    public static func tooLarge(_ what: String, offset: Int) -> AMFError {
        AMFError(.tooLarge, offset: offset, detail: what)
    }

    /// Bytes that do not form the value their marker announces.
    public static func malformed(_ what: String, offset: Int) -> AMFError {
        AMFError(.malformed, offset: offset, detail: what)
    }

    public var description: String { "AMF decoding failed at byte \(offset): \(detail)" }

    /// Errors are equal when they are of the same kind, wherever they happened.
    public static func == (lhs: AMFError, rhs: AMFError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
