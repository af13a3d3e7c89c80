import StreamKitCore

/// Why bytes are not a valid FLV file, with the file offset where it went wrong.
///
/// Errors compare equal by kind, wherever they happened.
public struct FLVError: KindedError {
    package enum Kind: Hashable, Sendable {
        case notFLV
        case badHeader
        case badTag
        case encrypted
        case truncated
    }

    package let kind: Kind
    /// The byte offset in the file (or stream) of the header or tag that failed.
    public let offset: Int64
    /// What was found there.
    public let detail: String

    /// The data does not start with the `FLV` signature.
    public static func notFLV(offset: Int64 = 0) -> FLVError {
        FLVError(kind: .notFLV, offset: offset, detail: "the data does not start with the FLV signature")
    }

    /// The file header has an unknown version or an impossible data offset.
    public static func badHeader(_ detail: String, offset: Int64 = 0) -> FLVError {
        FLVError(kind: .badHeader, offset: offset, detail: detail)
    }

    /// A tag header that cannot be right: reserved bits set, an unknown tag type, a non-zero stream id.
    public static func badTag(_ detail: String, offset: Int64) -> FLVError {
        FLVError(kind: .badTag, offset: offset, detail: detail)
    }

    /// A tag with the filter bit set (encrypted content, FLV 10.1 §E.4.1).
    public static func encrypted(offset: Int64) -> FLVError {
        FLVError(kind: .encrypted, offset: offset, detail: "the tag is encrypted (filter bit set)")
    }

    /// The file ends inside a tag.
    public static func truncated(offset: Int64) -> FLVError {
        FLVError(kind: .truncated, offset: offset, detail: "the file ends inside a tag")
    }

    public var description: String { "invalid FLV at byte \(offset): \(detail)" }
}
