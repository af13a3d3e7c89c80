/// HMAC (RFC 2104) over any of the streaming hash functions, for protocols that sign with it
/// (the RTMP digest handshake uses HMAC-SHA256).
public struct HMAC<Hash: HashFunction>: Sendable {
    /// The block size of the hash in bytes: 64 for MD5 and SHA-256.
    private static var blockSize: Int { 64 }

    private var inner: Hash
    private var outerKeyPad: [UInt8]

    /// Starts an HMAC with `key`; keys longer than the block size are hashed first (RFC 2104 §2).
    public init(key: some Collection<UInt8>) {
        var keyBytes = Array(key)
        if keyBytes.count > Self.blockSize { keyBytes = Hash.hash(keyBytes).bytes }
        keyBytes += [UInt8](repeating: 0, count: Self.blockSize - keyBytes.count)
        inner = Hash()
        inner.update(keyBytes.map { $0 ^ 0x36 })
        outerKeyPad = keyBytes.map { $0 ^ 0x5C }
    }

    /// Feeds `bytes` to the authentication code.
    public mutating func update(_ bytes: some Sequence<UInt8>) { inner.update(bytes) }

    /// The authentication code of every byte fed so far. The value may not be used afterwards.
    public mutating func finalize() -> Digest {
        let innerDigest = inner.finalize()
        var outer = Hash()
        outer.update(outerKeyPad)
        outer.update(innerDigest.bytes)
        return outer.finalize()
    }

    /// The authentication code of `message` under `key` in one call.
    public static func authenticationCode(for message: some Sequence<UInt8>, key: some Collection<UInt8>) -> Digest {
        var hmac = HMAC(key: key)
        hmac.update(message)
        return hmac.finalize()
    }
}
