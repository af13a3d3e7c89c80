/// Why a SAMPLE-AES segment (MPEG-TS, or fragmented MP4 with `cbcs`) could not be decrypted (or,
/// in tests, encrypted).
public struct SampleAESError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The bytes are not an MPEG-TS (no 0x47 sync byte every 188 bytes): packed audio, fMP4.
        public static let notTransportStream = Kind("not an MPEG-TS segment")
        /// The bytes are not the fragmented MP4 expected: a box that does not fit, a missing `moov`
        /// or `moof`, a truncated field.
        public static let notFragmentedMP4 = Kind("not a fragmented MP4 segment")
        /// The MP4's protection is not the `cbcs` this decrypts: another scheme (`cenc`, `cens`),
        /// sample groups that change the key or pattern, a track with no `tenc`.
        public static let unsupportedProtection = Kind("unsupported protection")
        /// The program tables cannot be rewritten (a PMT across packets, one that no longer fits).
        public static let unsupportedProgramTable = Kind("unsupported program table")
        /// The key or IV is not 16 bytes.
        public static let invalidKey = Kind("invalid key")
        /// Decrypted samples fail their own check (an AC-3 frame's CRC): a wrong key or IV, or a
        /// damaged segment. H.264 and AAC carry no check, so a wrong key there goes unnoticed.
        public static let checkFailed = Kind("decrypted samples do not check")

        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// What was being read, and what was wrong with it.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind): \(detail)" }
}
