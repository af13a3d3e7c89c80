/// Why bytes are not a valid FLV file, with the file offset where it went wrong.
public struct FLVError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case notFLV
        case badHeader
        case badTag
        case encrypted
        case truncated
    }

    private let code: Code
    /// The byte offset in the file (or stream) of the header or tag that failed.
    public let offset: Int64
    /// What was found there.
    public let detail: String

    private init(_ code: Code, offset: Int64, detail: String) {
        self.code = code
        self.offset = offset
        self.detail = detail
    }

    /// The data does not start with the `FLV` signature.
    public static func notFLV(offset: Int64 = 0) -> FLVError {
        FLVError(.notFLV, offset: offset, detail: "the data does not start with the FLV signature")
    }

    /// The file header has an unknown version or an impossible data offset.
    public static func badHeader(_ detail: String, offset: Int64 = 0) -> FLVError {
        FLVError(.badHeader, offset: offset, detail: detail)
    }

    /// A tag header that cannot be right: reserved bits set, an unknown tag type, a non-zero stream id.
    public static func badTag(_ detail: String, offset: Int64) -> FLVError {
        FLVError(.badTag, offset: offset, detail: detail)
    }

    /// A tag with the filter bit set (encrypted content, FLV 10.1 §E.4.1).
    public static func encrypted(offset: Int64) -> FLVError {
        FLVError(.encrypted, offset: offset, detail: "the tag is encrypted (filter bit set)")
    }

    /// The file ends inside a tag.
    public static func truncated(offset: Int64) -> FLVError {
        FLVError(.truncated, offset: offset, detail: "the file ends inside a tag")
    }

    public var description: String { "invalid FLV at byte \(offset): \(detail)" }

    public static func == (lhs: FLVError, rhs: FLVError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
