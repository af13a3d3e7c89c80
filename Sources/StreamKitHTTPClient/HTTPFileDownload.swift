import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

#if canImport(Glibc)
import CStreamKitLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How ``HTTPClient/download(_:to:options:)`` behaves.
public struct HTTPFileDownloadOptions: Sendable {
    /// When to retry; a retry resumes from the byte reached.
    public var retry: HTTPClientRetryPolicy
    /// Whether partial data left by an earlier run (with its resume record) is resumed.
    public var resumesPartialData: Bool
    /// The least time between two progress values.
    public var progressInterval: Duration
    /// Whether the finished file carries the strong ETag it was fetched with, in the attribute
    /// ``FileEntityTagAttribute`` (set before the file takes its name, so a file in place always
    /// has it where the file system keeps user attributes): what a later run checks it against.
    public var recordsEntityTag: Bool

    /// Creates options.
    public init(
        retry: HTTPClientRetryPolicy = .default, resumesPartialData: Bool = true,
        progressInterval: Duration = .milliseconds(250), recordsEntityTag: Bool = false
    ) {
        self.retry = retry
        self.resumesPartialData = resumesPartialData
        self.progressInterval = progressInterval
        self.recordsEntityTag = recordsEntityTag
    }
}

/// A finished file download.
public struct HTTPFileDownloadResult: Hashable, Sendable {
    /// The file written.
    public var destination: URL
    /// The URL the last response came from (after redirects).
    public var finalURL: String
    /// The file's length.
    public var byteCount: Int64
    /// Bytes that were on disk from an earlier run and kept.
    public var resumedFrom: Int64
    /// Bytes received in this run.
    public var bytesTransferred: Int64
    /// Whether the server made the download start over from byte zero (it ignored `Range`, or
    /// the representation changed since the partial data was fetched).
    public var restartedFromZero: Bool
    /// Requests made.
    public var attempts: Int
    /// The validator of the file written (its strong ETag, else its Last-Modified date), if the
    /// server sent one: what a later download of the same resource can be checked against.
    public var validator: HTTPClientRequest.IfRange?

    /// Creates a result.
    public init(
        destination: URL, finalURL: String, byteCount: Int64, resumedFrom: Int64, bytesTransferred: Int64,
        restartedFromZero: Bool, attempts: Int, validator: HTTPClientRequest.IfRange? = nil
    ) {
        self.destination = destination
        self.finalURL = finalURL
        self.byteCount = byteCount
        self.resumedFrom = resumedFrom
        self.bytesTransferred = bytesTransferred
        self.restartedFromZero = restartedFromZero
        self.attempts = attempts
        self.validator = validator
    }
}

/// Where a download keeps its partial data and resume record: next to the destination.
public enum HTTPFileDownloadPaths {
    /// `<destination>.streamkit-partial`: the bytes received so far, from offset 0 without gaps.
    public static func partial(for destination: URL) -> URL {
        // `isDirectory: false`: without it Foundation asks the file system (a stat per call).
        destination.deletingLastPathComponent().appendingPathComponent(
            destination.lastPathComponent + ".streamkit-partial", isDirectory: false)
    }

    /// Whether a download into `destination` left partial data with its resume record (in the
    /// partial file's attribute or the record file), so that running it again resumes.
    public static func hasResumeRecord(for destination: URL) -> Bool {
        switch ResumeRecordAttribute.read(path: partial(for: destination).path) {
        case .noFile: return false
        case .value: return true
        case .none: return access(resumeRecord(for: destination).path, F_OK) == 0
        }
    }

    /// `<destination>.streamkit-resume`: the URL and validator the partial bytes belong to (JSON),
    /// where the file system cannot keep them in the partial file's extended attribute
    /// `user.streamkit.resume` (``ResumeRecordAttribute``).
    public static func resumeRecord(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(
            destination.lastPathComponent + ".streamkit-resume", isDirectory: false)
    }
}

/// A running download into a file: progress as an asynchronous stream, then the result.
public final class HTTPFileDownload: Sendable {
    /// Progress values, at most one per ``HTTPFileDownloadOptions/progressInterval`` and a last one
    /// at the end; the stream finishes when the download does. Slow readers see the newest values.
    public let progress: AsyncStream<HTTPClientProgress>
    private let task: Task<HTTPFileDownloadResult, any Error>

    init(progress: AsyncStream<HTTPClientProgress>, task: Task<HTTPFileDownloadResult, any Error>) {
        self.progress = progress
        self.task = task
    }

    /// Waits for the download to end.
    ///
    /// - Returns: The result.
    /// - Throws: ``HTTPClientError``: the failure after retries; `cancelled` when cancelled (the
    ///   partial data and resume record are kept so that the next run resumes).
    public func result() async throws -> HTTPFileDownloadResult {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Stops the download, keeping what it fetched for a later resume.
    public func cancel() { task.cancel() }
}

/// The resume record saved next to partial data.
struct ResumeRecord: Codable, Hashable, Sendable {
    var url: String
    var entityTag: String?
    var lastModified: String?
    var completeLength: Int64?

    var validator: HTTPClientRequest.IfRange? {
        if let tag = entityTag.flatMap(EntityTag.init(headerValue:)), !tag.isWeak { return .entityTag(tag) }
        return lastModified.flatMap(HTTPDate.parse).map { .lastModified($0) }
    }

    init(url: String, validator: HTTPClientRequest.IfRange?, completeLength: Int64?) {
        self.url = url
        self.completeLength = completeLength
        switch validator {
        case .entityTag(let tag): entityTag = tag.headerValue
        case .lastModified(let date): lastModified = HTTPDate.format(date)
        case nil: break
        }
    }
}

extension HTTPClient {
    /// Downloads `request` into the file `destination`, resuming partial data from an earlier run
    /// and retrying from the byte reached.
    ///
    /// Bytes go to `<destination>.streamkit-partial`, with the URL, validator and length in
    /// `<destination>.streamkit-resume`; when complete, the partial file is renamed to
    /// `destination` and the record removed. Resumed requests send `If-Range`, so a changed file
    /// starts over from zero instead of mixing versions (``HTTPFileDownloadResult/restartedFromZero``).
    ///
    /// - Parameters:
    ///   - request: What to fetch; its `range` and `ifRange` are set by the download.
    ///   - destination: The file to create (replaced if it exists).
    ///   - options: Retries, resume, progress interval.
    /// - Returns: The running download.
    public func download(
        _ request: HTTPClientRequest, to destination: URL, options: HTTPFileDownloadOptions = HTTPFileDownloadOptions()
    ) -> HTTPFileDownload {
        let (stream, continuation) = AsyncStream.makeStream(
            of: HTTPClientProgress.self, bufferingPolicy: .bufferingNewest(8))
        let task = Task {
            defer { continuation.finish() }
            return try await FileDownloadRunner(
                client: self, request: request, destination: destination, options: options, progress: continuation
            ).run()
        }
        return HTTPFileDownload(progress: stream, task: task)
    }
}

/// Performs a ``FileDownloadStateMachine``'s actions: requests, file writes, waits, progress.
private struct FileDownloadRunner {
    let client: HTTPClient
    let request: HTTPClientRequest
    let destination: URL
    let options: HTTPFileDownloadOptions
    let progress: AsyncStream<HTTPClientProgress>.Continuation

    private let partialPath: URL
    private let recordPath: URL

    init(
        client: HTTPClient, request: HTTPClientRequest, destination: URL, options: HTTPFileDownloadOptions,
        progress: AsyncStream<HTTPClientProgress>.Continuation
    ) {
        self.client = client
        self.request = request
        self.destination = destination
        self.options = options
        self.progress = progress
        partialPath = HTTPFileDownloadPaths.partial(for: destination)
        recordPath = HTTPFileDownloadPaths.resumeRecord(for: destination)
    }

    func run() async throws -> HTTPFileDownloadResult {
        do {
            return try await download()
        } catch let error as HTTPClientError {
            // Keep partial data for a resume; drop an empty partial file and its record.
            if error.kind != .cancelled, error.byteOffset ?? 0 == 0, Self.fileSize(partialPath.path) == 0 {
                unlink(partialPath.path)
                unlink(recordPath.path)
            }
            throw error
        }
    }

    private func download() async throws -> HTTPFileDownloadResult {
        let timing = client.configuration.retryTiming
        let (resume, foundRecordFile) = resumePoint()
        var recordFile = foundRecordFile
        var machine = FileDownloadStateMachine(url: request.url, resume: resume, policy: options.retry)
        let descriptor = PrivateFiles.open(partialPath.path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = SystemError.current("open", subject: partialPath.path)
            throw HTTPClientError.fileWriteFailed(failure, url: request.url)
        }
        defer { close(descriptor) }
        var meter = TransferSpeedMeter()
        var transferred: Int64 = 0
        var lastReport: ContinuousClock.Instant?
        var finalURL = request.url

        func report(force: Bool) {
            let now = ContinuousClock.now
            meter.record(totalBytes: transferred, at: now)
            if !force, let lastReport, lastReport.duration(to: now) < options.progressInterval { return }
            lastReport = now
            progress.yield(
                HTTPClientProgress(
                    bytesReceived: machine.offset, expectedLength: machine.completeLength,
                    bytesTransferred: transferred, bytesPerSecond: meter.bytesPerSecond))
        }

        attempts: while true {
            try checkCancellation()
            let plan = machine.nextRequest()
            if plan.truncateFirst { try truncate(descriptor, to: 0) }
            var attemptRequest = request
            attemptRequest.range = plan.range
            attemptRequest.ifRange = plan.ifRange
            attemptRequest.decodesContent = false  // offsets count identity bytes
            attemptRequest.bodyIsWrittenToFile = true
            var attemptError: HTTPClientError?
            do {
                let response = try await client.execute(attemptRequest)
                finalURL = response.url
                switch machine.headReceived(response.head, randomUnit: timing.randomUnit(), now: timing.now()) {
                case .complete:
                    response.body.reader.cancel()
                    break attempts
                case .fail(let error):
                    response.body.reader.cancel()
                    throw error
                case .retry(let delay, let truncateFirst, _):
                    response.body.reader.cancel()
                    if truncateFirst { try truncate(descriptor, to: 0) }
                    try await client.sleep(delay, timing: timing, url: request.url)
                    continue attempts
                case .writeBody(let offset, let truncateFirst, let saveRecord):
                    if truncateFirst { try truncate(descriptor, to: offset) }
                    if saveRecord {
                        let record = ResumeRecord(
                            url: request.url, validator: machine.validator, completeLength: machine.completeLength)
                        if try save(record, partialDescriptor: descriptor) { recordFile = true }
                    }
                    report(force: true)
                    let start = machine.offset
                    var counted: Int64 = 0
                    try await response.body.write(toFileDescriptor: descriptor, at: start) { written in
                        machine.bodyWritten(Int(written - counted))
                        transferred += written - counted
                        counted = written
                        report(force: false)
                    }
                }
            } catch let error as HTTPClientError {
                if error.kind == .cancelled || Task.isCancelled {
                    throw HTTPClientError(
                        .cancelled, url: request.url, byteOffset: machine.offset,
                        detail: "cancelled; partial data kept for resume")
                }
                if error.kind == .fileWriteFailed { throw error.with(url: request.url) }
                attemptError = error
            }
            switch machine.attemptEnded(error: attemptError, randomUnit: timing.randomUnit(), now: timing.now()) {
            case .complete:
                break attempts
            case .retry(let delay, let error):
                client.configuration.logger.info(
                    "retrying \(request.url) from byte \(machine.offset) in \(delay): \(error)")
                try await client.sleep(delay, timing: timing, url: request.url)
            case .fail(let error):
                throw error
            }
        }
        report(force: true)
        // The finished file keeps its ETag when asked, and none of our bookkeeping. The resume
        // record goes only once the file has its name: a process killed before the rename
        // leaves a complete partial file with its record, which the next run finds complete (a
        // 416 at its length), not one without, which it would fetch again whole.
        if options.recordsEntityTag, case .entityTag(let tag) = machine.validator {
            _ = FileEntityTagAttribute.set(tag, descriptor: descriptor)
        }
        if rename(partialPath.path, destination.path) != 0 {
            let failure = SystemError.current("rename", subject: destination.path)
            throw HTTPClientError.fileWriteFailed(failure, url: request.url)
        }
        ResumeRecordAttribute.remove(descriptor: descriptor)
        if recordFile { unlink(recordPath.path) }
        return HTTPFileDownloadResult(
            destination: destination, finalURL: finalURL, byteCount: machine.offset, resumedFrom: machine.resumedFrom,
            bytesTransferred: transferred, restartedFromZero: machine.restartedFromZero, attempts: machine.attempts,
            validator: machine.validator)
    }

    /// The partial data an earlier run left, if its record matches this URL; and whether a record
    /// file (rather than the partial file's attribute) is there to remove at the end.
    private func resumePoint() -> (point: FileDownloadStateMachine.ResumePoint?, recordFile: Bool) {
        // Most downloads start fresh: one failed attribute read says there is no partial file.
        let data: [UInt8]
        var recordFile = false
        switch ResumeRecordAttribute.read(path: partialPath.path) {
        case .noFile:
            return (nil, access(recordPath.path, F_OK) == 0)
        case .value(let value):
            data = value
        case .none:
            // A file system without user attributes, or a record written by an older version.
            guard access(recordPath.path, F_OK) == 0 else { return (nil, false) }
            recordFile = true
            data = (try? [UInt8](Data(contentsOf: recordPath))) ?? []
        }
        guard options.resumesPartialData,
            let record = try? JSONDecoder().decode(ResumeRecord.self, from: Data(data)),
            record.url == request.url,
            let size = Self.fileSize(partialPath.path)
        else {
            if recordFile { unlink(recordPath.path) }
            return (nil, false)
        }
        if let length = record.completeLength, size > length { return (nil, recordFile) }
        return (.init(offset: size, validator: record.validator, completeLength: record.completeLength), recordFile)
    }

    /// The size of the regular file at `path`, or `nil` when there is none.
    private static func fileSize(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    /// Saves `record` in the partial file's attribute (one system call: no file of its own to
    /// create, rename and remove for every download, which cost an HLS download of small segments
    /// a good part of its CPU time), else in the record file. Returns whether the file was used.
    private func save(_ record: ResumeRecord, partialDescriptor: Int32) throws -> Bool {
        do {
            let data = try JSONEncoder().encode(record)
            if ResumeRecordAttribute.write(Array(data), descriptor: partialDescriptor) { return false }
            // An attribute an earlier run left would be read before the file: it goes.
            ResumeRecordAttribute.remove(descriptor: partialDescriptor)
            // Replaced whole, without Foundation's fsync (one per file would cost an HLS download a
            // sync per segment); a record torn by a power loss fails to decode and the file restarts.
            try AtomicFile.write(data, to: recordPath.path, temporarySuffix: ".streamkit-tmp")
            return true
        } catch let failure as SystemError {
            throw HTTPClientError.fileWriteFailed(
                failure, url: request.url, detail: "saving \(recordPath.path): \(failure)")
        } catch {
            throw HTTPClientError(.fileWriteFailed, url: request.url, detail: "saving \(recordPath.path): \(error)")
        }
    }

    /// Drops data past `length`. Only when there is some: on ext4, truncating to zero marks the
    /// file for a flush of all its dirty pages at close (the replace-via-truncate heuristic),
    /// which would stall every fresh download for the time the disk needs to write it.
    private func truncate(_ descriptor: Int32, to length: Int64) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let failure = SystemError.current("fstat", subject: partialPath.path)
            throw HTTPClientError.fileWriteFailed(failure, url: request.url)
        }
        guard Int64(status.st_size) > length else { return }
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            let failure = SystemError.current("ftruncate", subject: partialPath.path)
            throw HTTPClientError.fileWriteFailed(failure, url: request.url)
        }
    }

    private func checkCancellation() throws {
        if Task.isCancelled {
            throw HTTPClientError(.cancelled, url: request.url, detail: "cancelled; partial data kept for resume")
        }
    }
}
