#if canImport(CommonCrypto)
import CommonCrypto
#elseif canImport(CStreamKitOpenSSL)
import CStreamKitOpenSSL
#endif

/// The output of a hash function.
public struct Digest: Hashable, Sendable, CustomStringConvertible {
    /// The digest bytes.
    public let bytes: [UInt8]

    /// Lower-case hexadecimal, as `md5sum` and `sha256sum` print it.
    public var hexString: String { Hex.encode(bytes) }

    public var description: String { hexString }
}

/// A streaming hash function: feed it bytes in pieces, then take the digest.
public protocol HashFunction: Sendable {
    /// Creates a hasher that has seen no bytes.
    init()
    /// Feeds `bytes` to the hash.
    mutating func update(bytes: UnsafeRawBufferPointer)
    /// The digest of every byte fed so far. The hasher may not be used afterwards.
    mutating func finalize() -> Digest
}

extension HashFunction {
    /// Feeds a byte collection to the hash.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(bytes: UnsafeRawBufferPointer($0)) }
        if handled == nil {
            Array(bytes).withUnsafeBytes { update(bytes: $0) }
        }
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: some Sequence<UInt8>) -> Digest {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

#if canImport(CommonCrypto)

/// SHA-256 (FIPS 180-4), streaming.
public struct SHA256: HashFunction {
    private var context = CC_SHA256_CTX()
    public init() { CC_SHA256_Init(&context) }
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        CC_SHA256_Update(&context, bytes.baseAddress, CC_LONG(bytes.count))
    }
    public mutating func finalize() -> Digest {
        var output = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
        CC_SHA256_Final(&output, &context)
        return Digest(bytes: output)
    }
}

/// MD5 (RFC 1321), streaming: for cache file names and checksums, never for security.
public struct MD5: HashFunction {
    private var context = CC_MD5_CTX()
    public init() { CC_MD5_Init(&context) }
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        CC_MD5_Update(&context, bytes.baseAddress, CC_LONG(bytes.count))
    }
    public mutating func finalize() -> Digest {
        var output = [UInt8](repeating: 0, count: Int(CC_MD5_DIGEST_LENGTH))
        CC_MD5_Final(&output, &context)
        return Digest(bytes: output)
    }
}

#elseif canImport(CStreamKitOpenSSL)

/// An OpenSSL digest context with value semantics: copied on write when shared.
private final class DigestContext: @unchecked Sendable {
    // Safe to send: the context is only touched through a uniquely referenced owner (copy on write).
    let pointer: OpaquePointer

    init(algorithm: OpaquePointer) {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, algorithm, nil) == 1 else {
            fatalError("OpenSSL could not initialise a digest context")
        }
        pointer = context
    }

    init(copying other: DigestContext) {
        guard let context = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(context, other.pointer) == 1 else {
            fatalError("OpenSSL could not copy a digest context")
        }
        pointer = context
    }

    deinit { EVP_MD_CTX_free(pointer) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        EVP_DigestUpdate(pointer, bytes.baseAddress, bytes.count)
    }

    func finalize() -> Digest {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(pointer, &output, &length)
        return Digest(bytes: Array(output.prefix(Int(length))))
    }
}

/// SHA-256 (FIPS 180-4), streaming.
public struct SHA256: HashFunction {
    private var context = DigestContext(algorithm: EVP_sha256())
    public init() {}
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        if !isKnownUniquelyReferenced(&context) { context = DigestContext(copying: context) }
        context.update(bytes)
    }
    public mutating func finalize() -> Digest {
        if !isKnownUniquelyReferenced(&context) { context = DigestContext(copying: context) }
        return context.finalize()
    }
}

/// MD5 (RFC 1321), streaming: for cache file names and checksums, never for security.
public struct MD5: HashFunction {
    private var context = DigestContext(algorithm: EVP_md5())
    public init() {}
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        if !isKnownUniquelyReferenced(&context) { context = DigestContext(copying: context) }
        context.update(bytes)
    }
    public mutating func finalize() -> Digest {
        if !isKnownUniquelyReferenced(&context) { context = DigestContext(copying: context) }
        return context.finalize()
    }
}

#endif
