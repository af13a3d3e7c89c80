import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMPEGTS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PackageFiles {
    /// Decrypts the SAMPLE-AES MPEG-TS segment `source` into `destination` through a temporary
    /// name. Segments are a few megabytes: read, decrypted and written whole.
    static func decryptSampleAES(
        _ source: String, to destination: String, key: [UInt8], iv: [UInt8], entityTag: EntityTag?
    ) throws(HLSDownloadError) {
        let encrypted: Data
        do {
            encrypted = try Data(contentsOf: URL(fileURLWithPath: source, isDirectory: false))
        } catch {
            throw HLSDownloadError(.writeFailed, detail: "cannot read \(source): \(error)")
        }
        let clear: [UInt8]
        do {
            clear = try SampleAESTransportStream.decrypt(Array(encrypted), key: key, iv: iv)
        } catch {
            let kind: HLSDownloadError.Kind =
                switch error.kind {
                case .invalidKey: .invalidKey
                case .checkFailed: .decryptionFailed
                default: .unsupportedEncryption
                }
            throw HLSDownloadError(kind, detail: "SAMPLE-AES: \(error)")
        }
        let temporary = destination + PackageLayout.clearSuffix
        let output = PrivateFiles.open(temporary, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard output >= 0 else {
            throw HLSDownloadError(writeFailed: SystemError.current("open", subject: temporary))
        }
        do {
            try RangeFetcher.write(clear, to: output, at: 0)
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
        // The clear file carries the ETag of the encrypted bytes it came from, as for AES-128.
        if let entityTag { FileEntityTagAttribute.set(entityTag, descriptor: output) }
        close(output)
        try rename(temporary, to: destination)
    }
}
