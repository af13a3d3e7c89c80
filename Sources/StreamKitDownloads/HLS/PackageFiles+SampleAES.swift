import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMPEGTS

extension PackageFiles {
    /// Decrypts the SAMPLE-AES segment `source` into `destination` through a temporary name:
    /// MPEG-TS, fragmented MP4 as `protection` says, or an fMP4 init segment rewritten clear.
    /// Segments are a few megabytes: read, decrypted and written whole.
    static func decryptSampleAES(
        _ source: String, to destination: String, key: [UInt8], iv: [UInt8], scheme: Decryption.Scheme,
        protection: MP4Protection?, entityTag: EntityTag?
    ) throws(HLSDownloadError) {
        let encrypted: Data
        do {
            encrypted = try Data(contentsOf: URL(fileURLWithPath: source, isDirectory: false))
        } catch {
            throw HLSDownloadError(.writeFailed, detail: "cannot read \(source): \(error)")
        }
        let clear: [UInt8]
        do throws(SampleAESError) {
            switch scheme {
            case .sampleAESMP4:
                guard let protection else {
                    throw SampleAESError(.unsupportedProtection, "the protection of the init segment is not known")
                }
                clear = try protection.decryptSegment(Array(encrypted), key: key, iv: iv)
            case .clearMP4Init:
                clear = try MP4Protection.clearInitSegment(Array(encrypted))
            case .sampleAES, .wholeFile:
                clear = try SampleAESTransportStream.decrypt(Array(encrypted), key: key, iv: iv)
            }
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
