import StreamKitCore

/// AES-128-CBC over the protected blocks of one sample (a NAL unit, an audio frame), as the HLS
/// Sample Encryption format applies it: no padding, the chain restarting from the IV at every
/// sample.
struct SampleAESCipher: Sendable {
    /// Which way the cipher runs.
    enum Direction: Sendable {
        case decrypt, encrypt
    }

    let key: [UInt8]
    let iv: [UInt8]
    let direction: Direction

    /// - Throws: ``SampleAESError`` `invalidKey` when the key or IV is not 16 bytes.
    init(key: [UInt8], iv: [UInt8], direction: Direction) throws(SampleAESError) {
        guard key.count == AES128CBC.blockSize, iv.count == AES128CBC.blockSize else {
            throw SampleAESError(.invalidKey, "the key and the IV must be 16 bytes (got \(key.count) and \(iv.count))")
        }
        self.key = key
        self.iv = iv
        self.direction = direction
    }

    /// One sample's chain: blocks fed to it are chained to each other, starting from the IV.
    struct Chain {
        private var decryptor: AES128CBC.Decryptor?
        private var encryptor: AES128CBC.Encryptor?

        fileprivate init(_ cipher: SampleAESCipher) {
            // The key and IV were checked by the cipher's initializer: these cannot fail.
            switch cipher.direction {
            case .decrypt: decryptor = try? AES128CBC.Decryptor(key: cipher.key, iv: cipher.iv, padding: .none)
            case .encrypt: encryptor = try? AES128CBC.Encryptor(key: cipher.key, iv: cipher.iv, padding: .none)
            }
        }

        /// Replaces the whole blocks of `bytes[range]` by their transform, continuing the chain.
        mutating func apply(_ bytes: inout [UInt8], _ range: Range<Int>) {
            guard !range.isEmpty else { return }
            precondition(range.count % AES128CBC.blockSize == 0, "only whole blocks are protected")
            let output =
                if decryptor != nil { decryptor!.update(bytes[range]) } else { encryptor!.update(bytes[range]) }
            bytes.replaceSubrange(range, with: output)
        }
    }

    /// A new chain for the next sample.
    func chain() -> Chain { Chain(self) }
}
