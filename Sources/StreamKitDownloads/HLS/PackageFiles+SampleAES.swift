import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMPEGTS

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
        try writeClear(to: destination, entityTag: entityTag) { (output) throws(HLSDownloadError) in
            try RangeFetcher.write(clear, to: output, at: 0)
        }
    }
}
