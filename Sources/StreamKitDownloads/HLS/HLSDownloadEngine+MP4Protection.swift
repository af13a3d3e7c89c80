import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMPEGTS
import Synchronization

extension HLSDownloadEngine {
    /// The protection the SAMPLE-AES fMP4 init segment at `url` (its `range`) declares, fetched
    /// and read once per run. Fetched on its own rather than read from the package: the package's
    /// copy is rewritten clear, and a segment may be done before it.
    func mp4Protection(initURL url: String, range: ByteRange?) async throws(HLSDownloadError) -> MP4Protection {
        let identity = url + "#" + (range?.description ?? "")
        if let known = state.withLock({ $0.mp4Protections[identity] }) { return known }
        var request = HTTPClientRequest(url: url, headers: options.headers)
        if let range { request.range = .closed(first: range.lowerBound, last: range.upperBound - 1) }
        let body: [UInt8]
        do {
            body = try await client.data(for: request, limit: 4 << 20, retry: options.retry).body
        } catch let error as HTTPClientError {
            if error.kind == .cancelled || Task.isCancelled { throw .cancelled }
            throw HLSDownloadError(.fileFailed, url: url, detail: "the init segment: \(error)")
        } catch {
            throw .cancelled
        }
        let protection: MP4Protection
        do {
            protection = try MP4Protection.parse(initSegment: body)
        } catch {
            throw HLSDownloadError(.unsupportedEncryption, url: url, detail: "SAMPLE-AES: \(error)")
        }
        state.withLock { $0.mp4Protections[identity] = protection }
        return protection
    }
}
