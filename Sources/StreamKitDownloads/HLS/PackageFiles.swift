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

/// File operations on a package folder, with errors that name the file.
enum PackageFiles {
    /// The size of the file at `path`, or `nil` when there is no regular file there.
    static func size(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    static func exists(_ path: String) -> Bool { size(path) != nil }

    static func remove(_ path: String) { unlink(path) }

    static func rename(_ source: String, to destination: String) throws(HLSDownloadError) {
        guard systemRename(source, destination) == 0 else {
            throw HLSDownloadError(writeFailed: SystemError.current("rename", subject: destination))
        }
    }

    static func createDirectory(_ path: String) throws(HLSDownloadError) {
        do {
            try PrivateFiles.createDirectory(path)
        } catch {
            throw HLSDownloadError(.writeFailed, detail: "cannot create \(path): \(error)")
        }
    }

    /// Opens `path` for positional writes, creating it 0600.
    static func openForWriting(_ path: String) throws(HLSDownloadError) -> Int32 {
        let descriptor = PrivateFiles.open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw HLSDownloadError(writeFailed: SystemError.current("open", subject: path))
        }
        return descriptor
    }

    /// Decrypts `source` into `destination` through a temporary name: an AES-128-CBC file (PKCS#7
    /// padding) 1 MB at a time, or a SAMPLE-AES segment whole (MPEG-TS; fragmented MP4 with the
    /// `protection` its init declares; an fMP4 init rewritten clear).
    static func decrypt(
        _ source: String, to destination: String, key: [UInt8], iv: [UInt8],
        scheme: Decryption.Scheme = .wholeFile, protection: MP4Protection? = nil, entityTag: EntityTag? = nil
    ) throws(HLSDownloadError) {
        switch scheme {
        case .wholeFile:
            break
        case .sampleAES, .sampleAESMP4, .clearMP4Init:
            try decryptSampleAES(
                source, to: destination, key: key, iv: iv, scheme: scheme, protection: protection,
                entityTag: entityTag)
            return
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw HLSDownloadError(writeFailed: SystemError.current("open", subject: source))
        }
        defer { close(input) }
        var decryptor: AES128CBC.Decryptor
        do {
            decryptor = try AES128CBC.Decryptor(key: key, iv: iv)
        } catch {
            throw HLSDownloadError(.invalidKey, detail: "\(error)")
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var written: Int64 = 0
        try writeClear(to: destination, entityTag: entityTag) { (output) throws(HLSDownloadError) in
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw HLSDownloadError(writeFailed: SystemError.current("read", subject: source))
                }
                if count == 0 { break }
                let clear = decryptor.update(buffer[0..<count])
                try RangeFetcher.write(clear, to: output, at: written)
                written += Int64(clear.count)
            }
            let last: [UInt8]
            do {
                last = try decryptor.finalize()
            } catch {
                throw HLSDownloadError(
                    .decryptionFailed, detail: "\(error) (wrong key or IV, or a damaged segment)")
            }
            try RangeFetcher.write(last, to: output, at: written)
        }
    }

    /// Writes a decrypted file through `write` (given the descriptor) under a temporary name
    /// beside `destination`, then renames it into place; the temporary file goes on failure. The
    /// clear file carries the ETag of the encrypted bytes it came from, for a later check.
    static func writeClear(
        to destination: String, entityTag: EntityTag?, _ write: (Int32) throws(HLSDownloadError) -> Void
    ) throws(HLSDownloadError) {
        let temporary = destination + PackageLayout.clearSuffix
        let output = PrivateFiles.open(temporary, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard output >= 0 else {
            throw HLSDownloadError(writeFailed: SystemError.current("open", subject: temporary))
        }
        do throws(HLSDownloadError) {
            try write(output)
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
        if let entityTag { FileEntityTagAttribute.set(entityTag, descriptor: output) }
        close(output)
        try rename(temporary, to: destination)
    }

    /// The bytes of a `data:` URI (RFC 2397): base64 or percent-encoded.
    static func dataURIBytes(_ uri: String) -> [UInt8]? {
        guard uri.lowercased().hasPrefix("data:"), let comma = uri.firstIndex(of: ",") else { return nil }
        let meta = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma].lowercased()
        let payload = String(uri[uri.index(after: comma)...])
        if meta.hasSuffix(";base64") {
            return Data(base64Encoded: payload.removingPercentEncoding ?? payload).map(Array.init)
        }
        return payload.removingPercentEncoding.map { Array($0.utf8) }
    }
}

private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
