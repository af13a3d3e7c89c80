/// Why FLV media could not be remuxed into MPEG-TS.
public struct MPEGTSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: Hashable, Sendable {
        /// A decoder configuration record (avcC, hvcC, AudioSpecificConfig) is malformed.
        case invalidConfiguration
        /// A media frame is malformed (a NAL unit length runs past the tag).
        case invalidFrame
        /// The codec or one of its settings cannot be carried (only H.264, HEVC and AAC can).
        case unsupportedCodec
    }

    public let kind: Kind
    /// What was being read, and what was wrong with it.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String {
        switch kind {
        case .invalidConfiguration: "invalid decoder configuration: \(detail)"
        case .invalidFrame: "invalid frame: \(detail)"
        case .unsupportedCodec: "unsupported for MPEG-TS: \(detail)"
        }
    }
}
