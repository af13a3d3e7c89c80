import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// `download` of an HLS stream into a package, in the library or in `-o DIR`.
extension DownloadCommand {
    /// `--codec avc1,hvc1` as a list of prefixes.
    var codecList: [String] {
        (codecs ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func runHLS(
        _ context: CommandContext, client: HTTPClient, headers: HTTPHeaders, retry: HTTPClientRetryPolicy,
        queue: DownloadManager
    ) async throws {
        let selection = HLSSelection(
            variant: VariantPreference(variant) ?? .best, audio: RenditionPreference(audio) ?? .automatic,
            subtitles: RenditionPreference(subs) ?? .all, codecs: codecList)
        let id = HLSDownloadJob.packageID(source: url, selection: selection, decrypt: decrypt)
        let inLibrary = output == nil
        let directory: URL
        if let output {
            let expanded = output.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + output.dropFirst(1) : output
            directory = URL(fileURLWithPath: expanded, isDirectory: true)
        } else {
            let library = StreamKitHome.library(
                in: StreamKitHome.resolve(override: home, environment: context.environment))
            directory = URL(fileURLWithPath: library, isDirectory: true).appendingPathComponent(id, isDirectory: true)
        }
        let options = HLSDownloadOptions(
            connections: connections ?? 8, decrypt: decrypt, skipBroken: skipBroken, headers: headers,
            liveDuration: liveDuration.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            maximumSegments: maxSegments, retry: retry)
        let job = HLSDownloadJob(source: url, selection: selection, options: options, packageDirectory: directory)
        // In the library the task's folder is the package id's (the manager's own place for it);
        // -o DIR is a place of the user's.
        let task = try await begin(
            DownloadRequest(
                url: url, kind: .hls, selection: selection, decrypt: decrypt, connections: connections ?? 8,
                headers: headers, location: inLibrary ? nil : directory.standardizedFileURL.path),
            queue: queue, client: client, context: context)
        try await HLSDownloadRun(context: context, json: json, inLibrary: inLibrary).run(
            job, client: client, task: task)
    }
}
