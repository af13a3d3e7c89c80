import Foundation
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP

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

/// `streamkit rtmp record RTMP-URL -o OUT.flv [--duration SECONDS]`.
public struct RTMPRecordCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a live RTMP stream to an FLV file.",
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
            """,
        examples: [
            .init("Record until the stream ends", "streamkit rtmp record rtmp://example.com/live/show -o show.flv"),
            .init("Record 30 seconds", "streamkit rtmp record rtmp://example.com/live/show -o show.flv --duration 30"),
        ])

    @Argument(valueName: "rtmp-url", help: "The stream: rtmp[s]://host[:port]/app[/instance]/stream[?query].")
    var url: String
    @Option(name: "output", short: "o", valueName: "out.flv", help: "The FLV file to write.")
    var output: String
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

    public init() {}

    public mutating func validate() throws {
        try RTMPSessionOptions.validate(url: url)
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive, got \(duration)") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive, got \(idleTimeout)") }
        guard !output.isEmpty else { throw ValidationError("--output must name a file") }
        guard reconnect >= 0 else { throw ValidationError("--reconnect must not be negative, got \(reconnect)") }
        if !overwrite && FileManager.default.fileExists(atPath: output) {
            throw ValidationError("\(output) exists; pass --overwrite to replace it")
        }
    }

    public func run(_ context: CommandContext) async throws {
        let rtmpURL = try RTMPURL(url)
        let connection = session.connection(.recording)
        let options = RTMPRecorder.Options(
            duration: duration.map { .milliseconds(Int64(($0 * 1_000).rounded())) },
            idleTimeout: .milliseconds(Int64((idleTimeout * 1_000).rounded())),
            reconnects: reconnectForever ? nil : reconnect, overwrite: overwrite, connection: connection)
        let recorder = RTMPRecorder(url: rtmpURL, options: options)
        let reporter = ProgressPrinter(context: context, json: session.json)
        let output = output
        let summary: RTMPRecorder.Summary
        do {
            summary = try await InterruptHandler.run {
                try await recorder.record(to: output) { progress in
                    reporter.report(
                        "recording \(rtmpURL.streamName): \(Self.seconds(progress.duration)), \(Self.bytes(progress.bytes))",
                        fields: Self.fields(progress))
                }
            }
        } catch {
            context.writeError("error: recording \(url) to \(output) failed: \(error)\n")
            throw ExitCode.failure
        }
        let progress = summary.progress
        var end: [String: JSONValue] = [
            "end": .string("\(summary.endReason)"), "endReason": .string(summary.endReason.code),
        ]
        if let written = summary.output { end["output"] = .string(written) }
        guard summary.output != nil else {
            reporter.finish(
                "Nothing recorded, nothing written: \(summary.endReason)",
                fields: Self.fields(progress).merging(end) { $1 })
            throw summary.endReason == .cancelled ? ExitCode.interrupted : ExitCode.failure
        }
        reporter.finish(
            "Recorded \(Self.seconds(progress.duration)) (\(Self.bytes(progress.bytes)), \(progress.videoFrames) video and "
                + "\(progress.audioFrames) audio frames) to \(output): \(summary.endReason)",
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
            "reconnects": .number(Double(progress.reconnects)),
        ]
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
