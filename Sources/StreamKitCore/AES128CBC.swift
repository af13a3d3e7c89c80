#if canImport(CommonCrypto)
import CommonCrypto
#elseif canImport(CStreamKitOpenSSL)
import CStreamKitOpenSSL
#endif

/// AES-128 in CBC mode, as HLS uses it for `METHOD=AES-128` (RFC 8216bis §5.2): a 16-byte key,
/// a 16-byte IV, PKCS#7 padding on each segment.
public enum AES128CBC {
    /// The cipher's block size, and the length of keys and IVs.
    public static let blockSize = 16

    /// Whether the last block carries PKCS#7 padding (HLS segments do), or the data is whole blocks.
    public enum Padding: Sendable {
        /// PKCS#7: the plaintext is followed by 1 to 16 bytes each holding the padding length.
        case pkcs7
        /// No padding: input must be a whole number of blocks.
        case none
    }

    /// Decrypts `ciphertext` in one call.
    ///
    /// - Throws: ``CryptoError`` for a key or IV of the wrong length, a ciphertext that is not a
    ///   whole number of blocks, or bad padding.
    public static func decrypt(
        _ ciphertext: some Sequence<UInt8>, key: [UInt8], iv: [UInt8], padding: Padding = .pkcs7
    ) throws(CryptoError) -> [UInt8] {
        var decryptor = try Decryptor(key: key, iv: iv, padding: padding)
        var output = decryptor.update(ciphertext)
        output += try decryptor.finalize()
        return output
    }

    /// Encrypts `plaintext` in one call.
    public static func encrypt(
        _ plaintext: some Sequence<UInt8>, key: [UInt8], iv: [UInt8], padding: Padding = .pkcs7
    ) throws(CryptoError) -> [UInt8] {
        var encryptor = try Encryptor(key: key, iv: iv, padding: padding)
        var output = encryptor.update(plaintext)
        output += try encryptor.finalize()
        return output
    }

    /// The IV HLS uses when a key has no IV attribute: the media sequence number as a 128-bit
    /// big-endian integer (RFC 8216bis §5.2).
    public static func iv(mediaSequence: UInt64) -> [UInt8] {
        var buffer = ByteBuffer(capacity: blockSize)
        buffer.writeInteger(UInt64(0))
        buffer.writeInteger(mediaSequence)
        return Array(buffer.readableBytesView)
    }

    /// Streaming decryption: feed ciphertext in pieces of any size, then finalize.
    ///
    /// Output lags input by up to one block, which is held back until the padding can be checked.
    public struct Decryptor: Sendable {
        private var engine: CBCEngine

        /// - Throws: ``CryptoError`` when the key or IV is not 16 bytes.
        public init(key: [UInt8], iv: [UInt8], padding: Padding = .pkcs7) throws(CryptoError) {
            engine = try CBCEngine(key: key, iv: iv, padding: padding, decrypting: true)
        }

        /// Decrypts the next piece, returning whatever plaintext is certain so far.
        public mutating func update(_ ciphertext: some Sequence<UInt8>) -> [UInt8] {
            engine.update(Array(ciphertext))
        }

        /// Returns the last plaintext bytes with the padding removed.
        ///
        /// - Throws: ``CryptoError/badPadding`` or ``CryptoError/truncatedCiphertext(length:)``.
        public mutating func finalize() throws(CryptoError) -> [UInt8] {
            try engine.finalize()
        }
    }

    /// Streaming encryption: feed plaintext in pieces of any size, then finalize to add the padding.
    public struct Encryptor: Sendable {
        private var engine: CBCEngine

        /// - Throws: ``CryptoError`` when the key or IV is not 16 bytes.
        public init(key: [UInt8], iv: [UInt8], padding: Padding = .pkcs7) throws(CryptoError) {
            engine = try CBCEngine(key: key, iv: iv, padding: padding, decrypting: false)
        }

        /// Encrypts the next piece, returning the whole blocks produced so far.
        public mutating func update(_ plaintext: some Sequence<UInt8>) -> [UInt8] {
            engine.update(Array(plaintext))
        }

        /// Returns the final block, padded.
        ///
        /// - Throws: ``CryptoError/truncatedCiphertext(length:)`` without padding when the input
        ///   was not a whole number of blocks.
        public mutating func finalize() throws(CryptoError) -> [UInt8] {
            try engine.finalize()
        }
    }
}

#if canImport(CommonCrypto)

/// CBC built from single-block ECB calls, so the chaining state is a plain value and the engine
/// can be copied freely (CCCryptor references cannot be duplicated).
private struct CBCEngine: Sendable {
    private let key: [UInt8]
    private let padding: AES128CBC.Padding
    private let decrypting: Bool
    private var chain: [UInt8]
    private var pending: [UInt8] = []
    private var total: Int64 = 0

    init(key: [UInt8], iv: [UInt8], padding: AES128CBC.Padding, decrypting: Bool) throws(CryptoError) {
        guard key.count == AES128CBC.blockSize else { throw .invalidKeyLength(key.count) }
        guard iv.count == AES128CBC.blockSize else { throw .invalidIVLength(iv.count) }
        self.key = key
        self.chain = iv
        self.padding = padding
        self.decrypting = decrypting
    }

    mutating func update(_ input: [UInt8]) -> [UInt8] {
        total += Int64(input.count)
        pending += input
        // When decrypting with padding the last whole block is held back until finalize.
        var usable = pending.count - pending.count % AES128CBC.blockSize
        if decrypting, padding == .pkcs7, usable == pending.count, usable > 0 { usable -= AES128CBC.blockSize }
        var output: [UInt8] = []
        output.reserveCapacity(usable)
        for start in stride(from: 0, to: usable, by: AES128CBC.blockSize) {
            output += process(Array(pending[start..<(start + AES128CBC.blockSize)]))
        }
        pending.removeFirst(usable)
        return output
    }

    mutating func finalize() throws(CryptoError) -> [UInt8] {
        let size = AES128CBC.blockSize
        if decrypting {
            guard pending.count % size == 0 else { throw .truncatedCiphertext(length: total) }
            guard padding == .pkcs7 else { return [] }
            guard pending.count == size else { throw total == 0 ? .truncatedCiphertext(length: 0) : .badPadding }
            let block = process(pending)
            pending = []
            guard let last = block.last, last >= 1, last <= size,
                block.suffix(Int(last)).allSatisfy({ $0 == last })
            else { throw .badPadding }
            return Array(block.dropLast(Int(last)))
        }
        switch padding {
        case .none:
            guard pending.isEmpty else { throw .truncatedCiphertext(length: total) }
            return []
        case .pkcs7:
            let fill = size - pending.count
            let block = pending + [UInt8](repeating: UInt8(fill), count: fill)
            pending = []
            return process(block)
        }
    }

    private mutating func process(_ block: [UInt8]) -> [UInt8] {
        if decrypting {
            let plain = zip(ecb(block, operation: CCOperation(kCCDecrypt)), chain).map { $0 ^ $1 }
            chain = block
            return plain
        }
        let cipher = ecb(zip(block, chain).map { $0 ^ $1 }, operation: CCOperation(kCCEncrypt))
        chain = cipher
        return cipher
    }

    private func ecb(_ block: [UInt8], operation: CCOperation) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: AES128CBC.blockSize)
        var moved = 0
        CCCrypt(
            operation, CCAlgorithm(kCCAlgorithmAES), CCOptions(kCCOptionECBMode), key, key.count, nil,
            block, block.count, &output, output.count, &moved)
        return output
    }
}

#elseif canImport(CStreamKitOpenSSL)

/// An OpenSSL cipher context with value semantics: copied on write when shared.
private final class CipherContext: @unchecked Sendable {
    // Safe to send: only touched through a uniquely referenced owner (copy on write).
    let pointer: OpaquePointer

    init(key: [UInt8], iv: [UInt8], padding: Bool, decrypting: Bool) {
        guard let context = EVP_CIPHER_CTX_new(),
            EVP_CipherInit_ex(context, EVP_aes_128_cbc(), nil, key, iv, decrypting ? 0 : 1) == 1
        else { fatalError("OpenSSL could not initialise an AES-128-CBC context") }
        EVP_CIPHER_CTX_set_padding(context, padding ? 1 : 0)
        pointer = context
    }

    init(copying other: CipherContext) {
        guard let context = EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_copy(context, other.pointer) == 1 else {
            fatalError("OpenSSL could not copy a cipher context")
        }
        pointer = context
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }
}

private struct CBCEngine: Sendable {
    private var context: CipherContext
    private let decrypting: Bool
    private var total: Int64 = 0

    init(key: [UInt8], iv: [UInt8], padding: AES128CBC.Padding, decrypting: Bool) throws(CryptoError) {
        guard key.count == AES128CBC.blockSize else { throw .invalidKeyLength(key.count) }
        guard iv.count == AES128CBC.blockSize else { throw .invalidIVLength(iv.count) }
        context = CipherContext(key: key, iv: iv, padding: padding == .pkcs7, decrypting: decrypting)
        self.decrypting = decrypting
    }

    mutating func update(_ input: [UInt8]) -> [UInt8] {
        guard !input.isEmpty else { return [] }
        if !isKnownUniquelyReferenced(&context) { context = CipherContext(copying: context) }
        total += Int64(input.count)
        var output = [UInt8](repeating: 0, count: input.count + AES128CBC.blockSize)
        var written: Int32 = 0
        // EVP_CipherUpdate takes an int length; feed very large inputs in pieces.
        var produced = 0
        var consumed = 0
        while consumed < input.count {
            let piece = min(input.count - consumed, 1 << 30)
            let status = input.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { target in
                    EVP_CipherUpdate(
                        context.pointer, target.baseAddress! + produced, &written,
                        source.baseAddress! + consumed, Int32(piece))
                }
            }
            precondition(status == 1, "EVP_CipherUpdate failed on valid input")
            produced += Int(written)
            consumed += piece
        }
        output.removeLast(output.count - produced)
        return output
    }

    mutating func finalize() throws(CryptoError) -> [UInt8] {
        if !isKnownUniquelyReferenced(&context) { context = CipherContext(copying: context) }
        var output = [UInt8](repeating: 0, count: AES128CBC.blockSize)
        var written: Int32 = 0
        let status = EVP_CipherFinal_ex(context.pointer, &output, &written)
        guard status == 1 else {
            ERR_clear_error()
            if total % Int64(AES128CBC.blockSize) != 0 || total == 0 && decrypting {
                throw .truncatedCiphertext(length: total)
            }
            throw decrypting ? .badPadding : .truncatedCiphertext(length: total)
        }
        return Array(output.prefix(Int(written)))
    }
}

#endif
