/// A failure in hashing or AES: a bad key or IV, a damaged ciphertext, or the crypto library itself.
///
/// Errors compare equal by kind (`CryptoError.badPadding == error`); the context is for people.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidKeyLength
        case invalidIVLength
        case badPadding
        case truncatedCiphertext
        case backendFailure
    }

    private let code: Code
    /// What was being done and with what, for messages and logs.
    public let context: String

    private init(_ code: Code, _ context: String) {
        self.code = code
        self.context = context
    }

    /// The key is not 16 bytes long.
    public static func invalidKeyLength(_ length: Int) -> CryptoError {
        CryptoError(.invalidKeyLength, "AES-128 key must be 16 bytes, got \(length)")
    }

    /// The IV is not 16 bytes long.
    public static func invalidIVLength(_ length: Int) -> CryptoError {
        CryptoError(.invalidIVLength, "AES-128 IV must be 16 bytes, got \(length)")
    }

    /// The last block does not end in valid PKCS#7 padding: wrong key, wrong IV, or damaged data.
    public static let badPadding = CryptoError(.badPadding, "bad PKCS#7 padding (wrong key or IV, or damaged data)")

    /// The ciphertext length is not a multiple of the 16-byte block size.
    public static func truncatedCiphertext(length: Int64) -> CryptoError {
        CryptoError(.truncatedCiphertext, "ciphertext of \(length) bytes is not a whole number of 16-byte blocks")
    }

    /// The crypto library reported a failure in `operation`.
    public static func backendFailure(_ operation: String) -> CryptoError {
        CryptoError(.backendFailure, "crypto library failed in \(operation)")
    }

    public var description: String { context }

    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
