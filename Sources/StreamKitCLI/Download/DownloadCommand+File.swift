import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHTTP
import StreamKitHTTPClient

/// `download` of a progressive file: one request resumed with If-Range, or `-j N` range connections.
extension DownloadCommand {
    func runFile(
        _ context: CommandContext, client: HTTPClient, headers: HTTPHeaders, retry: HTTPClientRetryPolicy,
        queue: DownloadManager
    ) async throws {
        let destination = try resolveDestination(context)
        let task = try await begin(
            DownloadRequest(
                url: url, kind: .file, title: destination.lastPathComponent, connections: selection.connections ?? 1,
                headers: headers, location: destination.standardizedFileURL.path),
            queue: queue, client: client, context: context)
        let reporter = DownloadReporter(
            context: context, json: format.json, url: url, destination: destination, task: task)
        if let connections = selection.connections, connections > 1 {
            // N connections each buffer a body: smaller buffers keep the peak RSS under 40 MB at -j 8.
            await client.shutdown()
            let ranged = try HTTPClient(
                configuration: HTTPClientConfiguration(
                    userAgent: "streamkit/\(streamKitVersion)", environment: context.environment,
                    maximumConnectionsPerHost: max(connections, 8), globalReceiveRate: limitRate?.bytesPerSecond,
                    bodyBufferLimit: 128 << 10, receiveBufferSize: 128 << 10))
            try await runRanged(
                destination: destination, reporter: reporter, client: ranged, headers: headers, task: task)
            return
        }
        let request = HTTPClientRequest(url: url, headers: headers)
        let download = client.download(request, to: destination, options: HTTPFileDownloadOptions(retry: retry))
        let monitor = InterruptMonitor { download.cancel() }
        let started = ContinuousClock.now
        let progress = Task {
            for await value in download.progress { reporter.progress(value) }
        }
        defer { monitor.stop() }
        do {
            let result = try await download.result()
            await progress.value
            await client.shutdown()
            await task.finish(.succeeded(bytes: result.byteCount))
            reporter.completed(result, elapsed: started.duration(to: .now))
        } catch let error as HTTPClientError {
            await progress.value
            await client.shutdown()
            if monitor.wasInterrupted || error.kind == .cancelled {
                await task.finish(.stopped)
                reporter.interrupted(error)
                throw ExitCode.interrupted
            }
            await task.finish(.failed(error.description))
            reporter.failed(error)
            throw ExitCode.failure
        }
    }

    /// `-j N` on a file: N range connections (the download manager's engine), resumable through
    /// `FILE.streamkit-ranges`.
    private func runRanged(
        destination: URL, reporter: DownloadReporter, client: HTTPClient, headers: HTTPHeaders,
        task foreground: DownloadForegroundTask
    ) async throws {
        let url = url
        let options = RangedFileOptions(
            connections: selection.connections ?? 1, maximumConsecutiveFailures: retries.maximumAttempts)
        let task = Task {
            try await RangedFileDownload.run(
                url: url, to: destination, client: client, headers: headers, options: options,
                onProgress: { done, length in
                    reporter.progress(
                        HTTPClientProgress(
                            bytesReceived: done, expectedLength: length, bytesTransferred: done, bytesPerSecond: nil))
                })
        }
        let monitor = InterruptMonitor { task.cancel() }
        defer { monitor.stop() }
        let started = ContinuousClock.now
        do {
            let result = try await task.value
            await client.shutdown()
            await foreground.finish(.succeeded(bytes: result.byteCount))
            reporter.completed(
                HTTPFileDownloadResult(
                    destination: destination, finalURL: url, byteCount: result.byteCount,
                    resumedFrom: result.resumedFrom, bytesTransferred: result.byteCount - result.resumedFrom,
                    restartedFromZero: false, attempts: 1, validator: result.validator),
                elapsed: started.duration(to: .now))
        } catch {
            await client.shutdown()
            if monitor.wasInterrupted || error is CancellationError {
                await foreground.finish(.stopped)
                reporter.interrupted(HTTPClientError(.cancelled, url: url, detail: "interrupted"))
                throw ExitCode.interrupted
            }
            let failure = HTTPClientError(.transportFailure, url: url, detail: "\(error)")
            await foreground.finish(.failed(failure.description))
            reporter.failed(failure)
            throw ExitCode.failure
        }
    }

    /// The file to write: `-o` as a file, `-o` as a directory plus the URL's file name, or the
    /// URL's file name in the current directory. The name from the URL is sanitized.
    private func resolveDestination(_ context: CommandContext) throws -> URL {
        let name = Self.fileName(fromURL: url)
        guard let output else {
            return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(name)
        }
        let expanded = output.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + output.dropFirst(1) : output
        var isDirectory: ObjCBool = false
        if output.hasSuffix("/")
            || (FileManager.default.fileExists(atPath: expanded, isDirectory: &isDirectory)
                && isDirectory.boolValue)
        {
            return URL(fileURLWithPath: expanded, isDirectory: true).appendingPathComponent(name)
        }
        return URL(fileURLWithPath: expanded)
    }

    /// The last path segment of `url`, percent-decoded and made safe as a file name: no
    /// separators, control characters or leading dots; `download` when nothing is left.
    static func fileName(fromURL url: String) -> String {
        let path = URLComponents(string: url)?.percentEncodedPath ?? ""
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let decoded = last.removingPercentEncoding ?? last
        var name = String(
            decoded.unicodeScalars.map { scalar -> Character in
                if scalar == "/" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F { return "_" }
                return Character(scalar)
            })
        while name.hasPrefix(".") { name.removeFirst() }
        name = String(name.prefix(200))
        return name.isEmpty ? "download" : name
    }
}
