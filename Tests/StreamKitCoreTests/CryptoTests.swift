import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

/// Hashing and AES checked against the `openssl` command on random data of many sizes.
@Suite struct CryptoTests {
    static let sizes = [0, 1, 15, 16, 17, 55, 56, 63, 64, 65, 1_000, 4_095, 65_543, 1_048_576 + 3]

    @Test func knownVectors() {
        #expect(
            SHA256.hash(Array("abc".utf8)).hexString
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash([]).hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(MD5.hash(Array("abc".utf8)).hexString == "900150983cd24fb0d6963f7d28e17f72")
        #expect(MD5.hash([]).hexString == "d41d8cd98f00b204e9800998ecf8427e")
    }

    @Test func copiedHashersAreIndependent() {
        var first = SHA256()
        first.update(Array("ab".utf8))
        var second = first
        first.update(Array("c".utf8))
        second.update(Array("x".utf8))
        #expect(first.finalize() == SHA256.hash(Array("abc".utf8)))
        #expect(second.finalize() == SHA256.hash(Array("abx".utf8)))
    }

    @Test(.requires(.openssl), arguments: sizes)
    func hashesMatchOpenSSL(size: Int) async throws {
        let (data, file) = try randomFile(size: size, seed: UInt64(size))
        for (algorithm, ours) in [("sha256", streamingHash(SHA256.self, data)), ("md5", streamingHash(MD5.self, data))]
        {
            let output = try await Tool.openssl.run(["dgst", "-\(algorithm)", "-r", file.path])
            let expected = output.standardOutput.split(separator: " ").first.map(String.init)
            #expect(ours.hexString == expected, "\(algorithm) of \(size) bytes")
        }
    }

    @Test(.requires(.openssl), arguments: sizes)
    func aesMatchesOpenSSL(size: Int) async throws {
        let (plain, plainFile) = try randomFile(size: size, seed: UInt64(size) + 1_000)
        var generator = SplitMix64(seed: UInt64(size) + 7)
        let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let iv = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let cipherFile = plainFile.appendingPathExtension("enc")
        try await Tool.openssl.run([
            "enc", "-aes-128-cbc", "-K", Hex.encode(key), "-iv", Hex.encode(iv), "-in", plainFile.path, "-out",
            cipherFile.path,
        ])
        let theirs = Array(try Data(contentsOf: cipherFile))
        #expect(theirs.count == (size / 16 + 1) * 16)

        // Encrypting gives openssl's bytes; decrypting openssl's bytes in random pieces gives the plaintext.
        #expect(try AES128CBC.encrypt(plain, key: key, iv: iv) == theirs)
        var decryptor = try AES128CBC.Decryptor(key: key, iv: iv)
        var decrypted: [UInt8] = []
        var offset = 0
        while offset < theirs.count {
            let piece = min(theirs.count - offset, Int.random(in: 1...5_000, using: &generator))
            decrypted += decryptor.update(theirs[offset..<(offset + piece)])
            offset += piece
        }
        decrypted += try decryptor.finalize()
        #expect(decrypted == plain)

        // And openssl decrypts ours.
        let ours = plainFile.appendingPathExtension("ours")
        try Data(try AES128CBC.encrypt(plain, key: key, iv: iv)).write(to: ours)
        let roundTrip = plainFile.appendingPathExtension("dec")
        try await Tool.openssl.run([
            "enc", "-d", "-aes-128-cbc", "-K", Hex.encode(key), "-iv", Hex.encode(iv), "-in", ours.path, "-out",
            roundTrip.path,
        ])
        #expect(Array(try Data(contentsOf: roundTrip)) == plain)
    }

    @Test func aesErrorsAreTyped() throws {
        let key = [UInt8](repeating: 1, count: 16)
        let iv = [UInt8](repeating: 2, count: 16)
        #expect(throws: CryptoError.invalidKeyLength(15)) {
            try AES128CBC.decrypt([], key: Array(key.prefix(15)), iv: iv)
        }
        #expect(throws: CryptoError.invalidIVLength(17)) { try AES128CBC.decrypt([], key: key, iv: iv + [0]) }
        let cipher = try AES128CBC.encrypt(Array("hello, world".utf8), key: key, iv: iv)
        #expect(throws: CryptoError.truncatedCiphertext(length: 0)) {
            try AES128CBC.decrypt(cipher.dropLast(), key: key, iv: iv)
        }
        var wrongKey = key
        wrongKey[0] ^= 0xFF
        // A wrong key almost always breaks the padding; this key and text are known to.
        #expect(throws: CryptoError.badPadding) { try AES128CBC.decrypt(cipher, key: wrongKey, iv: iv) }
        #expect(throws: CryptoError.truncatedCiphertext(length: 0)) { try AES128CBC.decrypt([], key: key, iv: iv) }
        // Without padding, whole blocks pass through and partial ones are refused.
        let blocks = try AES128CBC.encrypt([UInt8](repeating: 9, count: 32), key: key, iv: iv, padding: .none)
        #expect(blocks.count == 32)
        #expect(try AES128CBC.decrypt(blocks, key: key, iv: iv, padding: .none) == [UInt8](repeating: 9, count: 32))
        #expect(throws: CryptoError.truncatedCiphertext(length: 0)) {
            try AES128CBC.encrypt([1, 2, 3], key: key, iv: iv, padding: .none)
        }
    }

    @Test func ivFromMediaSequenceIsBigEndian128Bit() {
        #expect(Hex.encode(AES128CBC.iv(mediaSequence: 0)) == String(repeating: "0", count: 32))
        #expect(Hex.encode(AES128CBC.iv(mediaSequence: 0x0102_0304)) == "00000000000000000000000001020304")
        #expect(Hex.encode(AES128CBC.iv(mediaSequence: UInt64.max)) == "0000000000000000ffffffffffffffff")
    }

    // MARK: Helpers

    private func streamingHash<H: HashFunction>(_ type: H.Type, _ data: [UInt8]) -> Digest {
        var hasher = H()
        var offset = 0
        var step = 1
        while offset < data.count {
            let end = min(data.count, offset + step)
            hasher.update(data[offset..<end])
            offset = end
            step = step * 3 + 1
        }
        return hasher.finalize()
    }

    private func randomFile(size: Int, seed: UInt64) throws -> ([UInt8], URL) {
        var generator = SplitMix64(seed: seed)
        // Eight bytes a draw: a byte at a time takes long in a debug build, on the shared pool.
        var data = [UInt8]()
        data.reserveCapacity(size + 8)
        while data.count < size { withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0) } }
        data.removeLast(data.count - size)
        let file = try TestRun.makeTemporaryDirectory("crypto").appendingPathComponent("data-\(size)")
        try Data(data).write(to: file)
        return (data, file)
    }
}
