/// A failure in hashing or AES: a bad key or IV, a damaged ciphertext, or the crypto library itself.
///
/// Errors compare equal by kind (`CryptoError.badPadding == error`); the context is for people.
public struct CryptoError: KindedError {
    package enum Kind: Hashable, Sendable {
        case invalidKeyLength
        case invalidIVLength
        case badPadding
        case truncatedCiphertext
        case backendFailure
    }

    package let kind: Kind
    /// What was being done and with what, for messages and logs.
    public let context: String

    /// The key is not 16 bytes long.
    public static func invalidKeyLength(_ length: Int) -> CryptoError {
        CryptoError(kind: .invalidKeyLength, context: "AES-128 key must be 16 bytes, got \(length)")
    }

    /// The IV is not 16 bytes long.
    public static func invalidIVLength(_ length: Int) -> CryptoError {
        CryptoError(kind: .invalidIVLength, context: "AES-128 IV must be 16 bytes, got \(length)")
    }

    /// The last block does not end in valid PKCS#7 padding: wrong key, wrong IV, or damaged data.
    public static let badPadding = CryptoError(
        kind: .badPadding, context: "bad PKCS#7 padding (wrong key or IV, or damaged data)")

    /// The ciphertext length is not a multiple of the 16-byte block size.
    public static func truncatedCiphertext(length: Int64) -> CryptoError {
        CryptoError(
            kind: .truncatedCiphertext, context: "ciphertext of \(length) bytes is not a whole number of 16-byte blocks"
        )
    }

    /// The crypto library reported a failure in `operation`.
    public static func backendFailure(_ operation: String) -> CryptoError {
        CryptoError(kind: .backendFailure, context: "crypto library failed in \(operation)")
    }

    package var detail: String { context }
    public var description: String { context }
}
