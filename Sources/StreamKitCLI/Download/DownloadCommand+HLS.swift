import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// `download` of an HLS stream into a package, in the library or in `-o DIR`.
extension DownloadCommand {
    func runHLS(
        _ context: CommandContext, kind: DownloadKind, client: HTTPClient, headers: HTTPHeaders,
        retry: HTTPClientRetryPolicy,
        queue: DownloadManager
    ) async throws {
        let hlsSelection = segmentFilter.applied(to: selection.hlsSelection)
        let id = HLSDownloadJob.packageID(source: url, selection: hlsSelection, decrypt: decrypt, salt: queue.idSalt)
        let inLibrary = output == nil
        let directory: URL
        if let output {
            let expanded = output.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + output.dropFirst(1) : output
            directory = URL(fileURLWithPath: expanded, isDirectory: true)
        } else {
            let library = StreamKitHome.library(in: home.path(context))
            directory = URL(fileURLWithPath: library, isDirectory: true).appendingPathComponent(id, isDirectory: true)
        }
        var options = HLSDownloadOptions(
            connections: selection.connections ?? 8, decrypt: decrypt, skipBroken: skipBroken, gapTags: gapTags,
            headers: headers,
            liveDuration: liveDuration.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            maximumSegments: maxSegments, retry: retry)
        options.strictPlaylists = strict
        options.keepEncrypted = keepEncrypted
        // Without -j, a far server gets more transfers while they fetch more (HLSDownloadOptions).
        if selection.connections == nil { options.mostConnections = Self.mostDefaultTransfers }
        let userKeys = try keys.userKeys()
        options.userKeys = userKeys
        var job = HLSDownloadJob(source: url, selection: hlsSelection, options: options, packageDirectory: directory)
        job.idSalt = queue.idSalt
        // In the library the task's folder is the package id's (the manager's own place for it);
        // -o DIR is a place of the user's.
        var request = DownloadRequest(
            url: url, kind: kind, selection: hlsSelection, decrypt: decrypt,
            connections: selection.connections ?? 8,
            headers: headers, location: inLibrary ? nil : directory.standardizedFileURL.path)
        // Kept in the task's secrets file, so that `queue run` can finish the task with them.
        request.userKeys = userKeys
        request.keepEncrypted = keepEncrypted
        let task = try await begin(request, queue: queue, client: client, context: context)
        try await HLSDownloadRun(context: context, json: format.json, inLibrary: inLibrary, subtitles: subsFormat).run(
            job, client: client, task: task)
    }
}
