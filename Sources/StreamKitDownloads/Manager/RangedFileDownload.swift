import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// A progressive file fetched over several range connections to a path of its own, outside any
/// queue (`streamkit download URL -j N`): the same engine as a ``DownloadManager`` file task, with
/// the resume state in `FILE.streamkit-ranges` (JSON: length, validator, the bytes done) next to
/// `FILE.streamkit-partial`. Running it again resumes exactly; when complete, the partial file is
/// renamed to `FILE` and the record deleted.
public enum RangedFileDownload {
    /// What a finished download did.
    public struct Result: Hashable, Sendable {
        /// The file's length.
        public var byteCount: Int64
        /// Bytes already in place when this run began.
        public var resumedFrom: Int64
        /// The validator used with `If-Range`.
        public var validator: HTTPClientRequest.IfRange?
    }

    private struct Record: Codable {
        var url: String
        var length: Int64?
        var validator: String?
        var done: ByteRangeSet
    }

    /// The partial file for `destination`.
    public static func partialPath(for destination: URL) -> String { destination.path + ".streamkit-partial" }
    /// The resume record for `destination`.
    public static func recordPath(for destination: URL) -> String { destination.path + ".streamkit-ranges" }

    /// Downloads `url` to `destination`, resuming what an earlier run left.
    ///
    /// - Parameters:
    ///   - url: The http or https URL.
    ///   - destination: The file to write.
    ///   - client: The client (its rate limit applies; allow `options.connections` per host).
    ///   - headers: Extra request headers.
    ///   - options: Connections, backoff, save interval.
    ///   - onProgress: Bytes in place and the length once known, at most every 100 ms.
    /// - Returns: What was done.
    /// - Throws: ``DownloadManagerError``: what failed (the partial data and record are kept), or
    ///   `CancellationError` when cancelled.
    public static func run(
        url: String, to destination: URL, client: HTTPClient, headers: HTTPHeaders = [:],
        options: RangedFileOptions = RangedFileOptions(),
        onProgress: @escaping @Sendable (_ done: Int64, _ length: Int64?) -> Void = { _, _ in }
    ) async throws -> Result {
        let partial = partialPath(for: destination)
        let recordPath = recordPath(for: destination)
        var initial = FileResumeState()
        if FileManager.default.fileExists(atPath: partial),
            let data = FileManager.default.contents(atPath: recordPath),
            let record = try? JSONDecoder().decode(Record.self, from: data), record.url == url
        {
            initial = FileResumeState(
                length: record.length, validator: record.validator.flatMap(DownloadIndex.validator), done: record.done)
        } else {
            try? FileManager.default.removeItem(atPath: partial)
        }
        let gate = ProgressGate(interval: .milliseconds(100))
        let downloader = RangedFileDownloader(
            client: client, url: url, headers: headers, partialPath: partial, options: options, initial: initial,
            taskID: destination.lastPathComponent,
            onProgress: { done, length in
                if gate.report(done: done, expected: length, fraction: nil, speed: nil) != nil {
                    onProgress(done, length)
                }
            },
            save: { state in
                let record = Record(
                    url: url, length: state.length, validator: state.validator.map(DownloadIndex.validatorText),
                    done: state.done)
                let data = try JSONEncoder().encode(record)
                try AtomicFile.write(data, to: recordPath, temporaryPath: recordPath + ".tmp")
            })
        let final = try await downloader.run()
        guard rename(partial, destination.path) == 0 else {
            throw DownloadManagerError(
                .fileSystem, "cannot rename \(partial) to \(destination.path): \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.removeItem(atPath: recordPath)
        onProgress(final.done.byteCount, final.length)
        return Result(
            byteCount: final.length ?? final.done.byteCount, resumedFrom: initial.done.byteCount,
            validator: final.validator)
    }
}
