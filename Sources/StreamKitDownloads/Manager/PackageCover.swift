import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// A task's cover picture (`queue add --thumbnail URL`), fetched when its package is complete and
/// kept in it as `poster.jpg`, `poster.png` or `poster.webp` (by what the bytes are), for the
/// player page of `streamkit serve`. What is not a JPEG, PNG or WebP picture, or larger than
/// ``limit``, is not kept; a cover that cannot be fetched does not fail the task.
enum PackageCover {
    /// The most bytes a cover may have.
    static let limit = 8 << 20

    /// The file names a cover is kept under, one per kind of picture.
    static let names = ["poster.jpg", "poster.png", "poster.webp"]

    /// The name for `bytes` by their signature, or `nil` when they are not a picture kept.
    static func name(for bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "poster.jpg" }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "poster.png" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return "poster.webp"
        }
        return nil
    }

    /// Fetches `url` with `headers` and keeps it in `folder`.
    ///
    /// - Returns: The file's name, or why it was not kept.
    static func fetch(
        _ url: String, headers: HTTPHeaders, client: HTTPClient, into folder: String
    ) async -> Result<String, PackageCoverFailure> {
        guard url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") else {
            return .failure(PackageCoverFailure("\(url) is not an http(s) URL"))
        }
        do {
            var request = HTTPClientRequest(url: url)
            request.headers = headers
            let (head, body) = try await client.data(for: request, limit: limit)
            guard head.status.rawValue == 200 else {
                return .failure(PackageCoverFailure("\(url): HTTP \(head.status.rawValue)"))
            }
            let bytes = Array(body)
            guard let name = name(for: bytes) else {
                return .failure(PackageCoverFailure("\(url) is not a JPEG, PNG or WebP picture"))
            }
            try AtomicFile.write(bytes, to: folder + "/" + name, temporaryPath: folder + "/." + name + ".part")
            return .success(name)
        } catch {
            return .failure(PackageCoverFailure("\(url): \(error)"))
        }
    }
}

/// Why a cover was not kept.
struct PackageCoverFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
