import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitFLV
import StreamKitRTMP
import Synchronization

/// `streamkit rtmp`: record and publish RTMP streams.
public struct RTMPCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "rtmp",
        abstract: "Record an RTMP stream to FLV, or publish FLV to an RTMP server.",
        examples: [
            .init(
                "Record 60 seconds of a live stream",
                "streamkit rtmp record rtmp://example.com/live/show -o show.flv --duration 60"),
            .init(
                "Publish a file at its own pace",
                "streamkit rtmp publish show.flv rtmp://example.com/live/show --realtime"),
        ],
        subcommands: [RTMPRecordCommand.self, RTMPPublishCommand.self],
        group: "Live streams")

    public init() {}
}

/// `streamkit rtmp record RTMP-URL [-o OUT.flv] [--hls DIR | --library] [--duration SECONDS]`.
public struct RTMPRecordCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a live RTMP stream to an FLV file, an HLS package, or both.",
        discussion: """
            The file starts with the stream's metadata and sequence headers, then media from the first \
            keyframe, with timestamps starting at zero. It is written as OUT.flv.part and renamed to \
            OUT.flv with the first media; an existing OUT.flv is refused unless --overwrite, and \
            nothing is left when no media arrives. Recording stops after --duration seconds of media, \
            when the server ends the stream, or when no media arrives for --idle-timeout seconds. A \
            dropped connection is reopened (--reconnect times in a row, waiting 1 s, then 2, 4, up \
            to 30 s) and the file continues. Exit code 0 when media was recorded, however the \
            stream ended; 2 when it ended before --duration; 1 when nothing was recorded; Ctrl-C \
            stops it with a complete file (130).

            --hls DIR also writes the stream as an HLS package while it records (H.264 or HEVC, AAC; \
            MPEG-TS segments cut at the first keyframe after --segment-duration), laid out as a \
            download: DIR/index.m3u8, DIR/video/index.m3u8 rewritten after each segment, \
            EXT-X-ENDLIST when the recording ends. --library puts the package in the library \
            ($STREAMKIT_HOME/library/ID) instead, where `streamkit serve` lists it as recording \
            from its first segment and serves it live; `streamkit export ID` exports it. -o may \
            then be left out.
            """,
        examples: [
            .init("Record until the stream ends", "streamkit rtmp record rtmp://example.com/live/show -o show.flv"),
            .init("Record 30 seconds", "streamkit rtmp record rtmp://example.com/live/show -o show.flv --duration 30"),
            .init(
                "Record into the library as live HLS", "streamkit rtmp record rtmp://example.com/live/show --library"),
        ])

    @Argument(valueName: "rtmp-url", help: "The stream: rtmp[s]://host[:port]/app[/instance]/stream[?query].")
    var url: String
    @Option(name: "output", short: "o", valueName: "out.flv", help: "The FLV file to write.")
    var output: String?
    @Option(valueName: "dir", help: "Also write an HLS package into this folder while recording.")
    var hls: String?
    @Flag(help: "Write the HLS package into the library, served live by `streamkit serve`.")
    var library = false
    @Option(valueName: "seconds", help: "The HLS segment length aimed at (cut at the next keyframe).")
    var segmentDuration: Double = 4
    @Option(valueName: "seconds", help: "Stop after this many seconds of media.")
    var duration: Double?
    @Option(valueName: "seconds", help: "Stop when no media arrives for this long.")
    var idleTimeout: Double = 10
    @Option(valueName: "n", help: "Reopen a dropped connection up to this many times in a row.")
    var reconnect: Int = 1
    @Flag(help: "Reopen a dropped connection however many times it takes.")
    var reconnectForever = false
    @Flag(help: "Replace an existing output file.")
    var overwrite = false
    @OptionGroup var session: RTMPSessionOptions
    @OptionGroup var home: HomeOptions

    public init() {}

    public mutating func validate() throws {
        try RTMPSessionOptions.validate(url: url)
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive, got \(duration)") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive, got \(idleTimeout)") }
        guard output != nil || hls != nil || library else {
            throw ValidationError("nothing to write: give -o FILE, --hls DIR or --library")
        }
        guard hls == nil || !library else { throw ValidationError("--hls and --library are exclusive") }
        if let hls, hls.isEmpty { throw ValidationError("--hls must name a folder") }
        guard segmentDuration >= 0.5 else {
            throw ValidationError("--segment-duration must be at least 0.5, got \(segmentDuration)")
        }
        guard reconnect >= 0 else { throw ValidationError("--reconnect must not be negative, got \(reconnect)") }
        if let output {
            guard !output.isEmpty else { throw ValidationError("--output must name a file") }
            if !overwrite && FileManager.default.fileExists(atPath: output) {
                throw ValidationError("\(output) exists; pass --overwrite to replace it")
            }
        }
    }

    public func run(_ context: CommandContext) async throws {
        let rtmpURL = try RTMPURL(url)
        let connection = session.connection(.recording)
        var options = RTMPRecorder.Options(
            duration: duration.map { .milliseconds(Int64(($0 * 1_000).rounded())) },
            idleTimeout: .milliseconds(Int64((idleTimeout * 1_000).rounded())),
            reconnects: reconnectForever ? nil : reconnect, overwrite: overwrite, connection: connection)
        let package: RTMPRecordPackage?
        do {
            package = try packageFolder(context).map { RTMPRecordPackage(directory: $0, url: url) }
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        if let package {
            options.hls = .init(
                directory: package.mediaDirectory,
                segmentDuration: .milliseconds(Int64((segmentDuration * 1_000).rounded())))
        }
        let recorder = RTMPRecorder(url: rtmpURL, options: options)
        let reporter = ProgressPrinter(context: context, json: session.json)
        let output = output
        let destination = [output, package?.directory].compactMap { $0 }.joined(separator: " and ")
        // The package joins the library with its first segment, and is complete at the end.
        let registered = Mutex(false)
        @Sendable func register(_ progress: RTMPRecorder.Progress, status: String) {
            guard let package, progress.segments > 0 else { return }
            let bandwidth = progress.duration > 0 ? Int(Double(progress.bytes) * 8 / progress.duration) : 1
            do {
                try package.write(bandwidth: bandwidth, codecs: progress.codecs, status: status)
                registered.withLock { $0 = true }
            } catch {
                context.writeError("warning: \(error)\n")
            }
        }
        let summary: RTMPRecorder.Summary
        do {
            summary = try await InterruptHandler.run {
                try await recorder.record(to: output) { progress in
                    if !registered.withLock({ $0 }) { register(progress, status: "recording") }
                    reporter.report(
                        "recording \(rtmpURL.streamName): \(Self.seconds(progress.duration)), \(Self.bytes(progress.bytes))"
                            + (package == nil ? "" : ", \(progress.segments) segments"),
                        fields: Self.fields(progress))
                }
            }
        } catch {
            // A package that had media ends as playable as it is (its playlist has EXT-X-ENDLIST).
            if registered.withLock({ $0 }), let package {
                try? package.write(bandwidth: 1, codecs: nil, status: "complete")
            }
            context.writeError("error: recording \(url) to \(destination) failed: \(error)\n")
            throw ExitCode.failure
        }
        let progress = summary.progress
        var end: [String: JSONValue] = [
            "end": .string("\(summary.endReason)"), "endReason": .string(summary.endReason.code),
        ]
        if let written = summary.output { end["output"] = .string(written) }
        if summary.hlsDirectory != nil, let package {
            register(summary.progress, status: "complete")
            end["hls"] = .string(package.directory)
            if library { end["package"] = .string((package.directory as NSString).lastPathComponent) }
        }
        guard summary.output != nil || summary.hlsDirectory != nil else {
            reporter.finish(
                "Nothing recorded, nothing written: \(summary.endReason)",
                fields: Self.fields(progress).merging(end) { $1 })
            throw summary.endReason == .cancelled ? ExitCode.interrupted : ExitCode.failure
        }
        reporter.finish(
            "Recorded \(Self.seconds(progress.duration)) (\(Self.bytes(progress.bytes)), \(progress.videoFrames) video and "
                + "\(progress.audioFrames) audio frames) to \(destination): \(summary.endReason)",
            fields: Self.fields(progress).merging(end) { $1 })
        if summary.endReason == .cancelled { throw ExitCode.interrupted }
        // Media was recorded: the stream ending, however it ended, is a success unless it came
        // before the requested duration.
        if duration != nil && summary.endReason != .durationReached { throw Self.endedEarly }
    }

    /// Exit code 2: the recording is complete but shorter than --duration asked for.
    static let endedEarly = ExitCode.finishedWithGaps

    private static func fields(_ progress: RTMPRecorder.Progress) -> [String: JSONValue] {
        [
            "seconds": .number(progress.duration), "bytes": .number(Double(progress.bytes)),
            "videoFrames": .number(Double(progress.videoFrames)), "audioFrames": .number(Double(progress.audioFrames)),
            "reconnects": .number(Double(progress.reconnects)), "segments": .number(Double(progress.segments)),
        ]
    }

    /// The HLS package's folder: --hls DIR, or a new folder in the library for --library.
    private func packageFolder(_ context: CommandContext) throws -> String? {
        if let hls { return hls.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + hls.dropFirst(1) : hls }
        guard library else { return nil }
        let homePath = home.path(context)
        try StreamKitHome.prepare(homePath)
        let salt = try DownloadManager.idSalt(directory: QueueAccess.directory(home, context))
        let id = RTMPRecordPackage.id(url: url, started: Date(), salt: salt)
        return StreamKitHome.library(in: homePath) + "/" + id
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
    static func bytes(_ value: Int64) -> String {
        value >= 1 << 20
            ? String(format: "%.1f MB", Double(value) / 1_048_576) : String(format: "%.1f KB", Double(value) / 1_024)
    }
}

/// `streamkit rtmp publish IN.flv RTMP-URL [--realtime]`.
public struct RTMPPublishCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish an FLV file to an RTMP server.",
        discussion: """
            Metadata and sequence headers are sent first. With --realtime, tags are paced by their \
            timestamps, as a live source would send them; without it, as fast as the server reads.
            """,
        examples: [
            .init("Publish as fast as possible", "streamkit rtmp publish show.flv rtmp://example.com/live/show"),
            .init(
                "Publish as a live stream", "streamkit rtmp publish show.flv rtmp://example.com/live/show --realtime"),
        ])

    @Argument(valueName: "in.flv", help: "The FLV file to publish.")
    var input: String
    @Argument(valueName: "rtmp-url", help: "Where to publish: rtmp[s]://host[:port]/app[/instance]/stream[?query].")
    var url: String
    @Flag(help: "Send at the pace of the file's timestamps.")
    var realtime = false
    @OptionGroup var session: RTMPSessionOptions

    public init() {}

    public mutating func validate() throws {
        try RTMPSessionOptions.validate(url: url)
    }

    public func run(_ context: CommandContext) async throws {
        let rtmpURL = try RTMPURL(url)
        let connection = session.connection(RTMPConnection.Configuration())
        let publisher = RTMPPublisher(
            url: rtmpURL, options: RTMPPublisher.Options(realtime: realtime, connection: connection))
        let reporter = ProgressPrinter(context: context, json: session.json)
        let started = ContinuousClock.now
        let input = input
        let progress: RTMPPublisher.Progress
        do {
            progress = try await InterruptHandler.run {
                try await publisher.publish(file: input) { progress in
                    let percent =
                        progress.fileSize > 0 ? 100 * Double(progress.fileBytes) / Double(progress.fileSize) : 0
                    reporter.report(
                        "publishing \(input): \(String(format: "%.0f%%", percent)), \(RTMPRecordCommand.seconds(progress.mediaSeconds))",
                        fields: Self.fields(progress))
                }
            }
        } catch is CancellationError {
            context.writeError("interrupted: publishing \(input) to \(url) stopped\n")
            throw ExitCode.interrupted
        } catch {
            context.writeError("error: publishing \(input) to \(url) failed: \(error)\n")
            throw ExitCode.failure
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        reporter.finish(
            "Published \(input) (\(RTMPRecordCommand.bytes(progress.fileSize)), \(progress.tags) tags, "
                + "\(RTMPRecordCommand.seconds(progress.mediaSeconds)) of media) to \(url) in \(String(format: "%.2f s", seconds))",
            fields: Self.fields(progress).merging(["elapsedSeconds": .number(seconds)]) { $1 })
    }

    private static func fields(_ progress: RTMPPublisher.Progress) -> [String: JSONValue] {
        [
            "tags": .number(Double(progress.tags)), "fileBytes": .number(Double(progress.fileBytes)),
            "fileSize": .number(Double(progress.fileSize)), "mediaSeconds": .number(progress.mediaSeconds),
            "bytesSent": .number(Double(progress.bytesSent)),
        ]
    }
}
