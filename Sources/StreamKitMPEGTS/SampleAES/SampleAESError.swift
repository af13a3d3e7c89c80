/// Why a SAMPLE-AES MPEG-TS segment could not be decrypted (or, in tests, encrypted).
public struct SampleAESError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The bytes are not an MPEG-TS (no 0x47 sync byte every 188 bytes): packed audio, fMP4.
        public static let notTransportStream = Kind("not an MPEG-TS segment")
        /// The program tables cannot be rewritten (a PMT across packets, one that no longer fits).
        public static let unsupportedProgramTable = Kind("unsupported program table")
        /// The key or IV is not 16 bytes.
        public static let invalidKey = Kind("invalid key")

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
