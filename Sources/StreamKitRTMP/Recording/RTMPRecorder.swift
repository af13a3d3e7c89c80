import StreamKitCore
import StreamKitFLV

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Records a live RTMP stream to an FLV file, the job of `streamkit rtmp record`.
///
/// It plays the stream, feeds a ``RecordingStateMachine`` and writes what it returns. The
/// recording stops at the requested duration, when the server ends the stream, or when no media
/// arrives for the idle timeout (a live stream nobody publishes still "starts" on nginx-rtmp).
/// A connection that drops without the server ending the stream is reopened, as
/// ``Options/reconnects`` allows with a growing wait, and the file continues.
///
/// With ``Options/hls`` the same tags also become a live HLS package (``RTMPToHLS``), beside the
/// file or instead of it; the playlist gets `EXT-X-ENDLIST` however the recording ends.
///
/// The file is written as `PATH.part` and renamed to `PATH` with the first media, so an existing
/// file is never touched before there is something to replace it with, and a recording that
/// gets no media leaves nothing behind.
public struct RTMPRecorder: Sendable {
    public struct Options: Hashable, Sendable {
        /// Stop after this much media time; `nil` records until the stream ends.
        public var duration: Duration?
        /// Stop (or fail, if nothing was recorded) when no media arrives for this long.
        public var idleTimeout: Duration
        /// How many times in a row a dropped connection is reopened; `nil` for no limit.
        public var reconnects: Int?
        /// The wait before the first attempt to reopen; it doubles with each failed attempt.
        public var reconnectDelay: Duration
        /// The longest wait between attempts to reopen.
        public var maximumReconnectDelay: Duration
        /// Whether a file already at the output path is replaced; when false, the recording fails
        /// before it connects.
        public var overwrite: Bool
        public var connection: RTMPConnection.Configuration
        /// A live HLS package to write while recording; `nil` for none.
        public var hls: HLSOutput?
        /// Whether the recording continues what an earlier one left (a queue task resumed by a
        /// new process): media is appended to the file at the path, with timestamps going on
        /// after its last, ``duration`` counts the whole file, and the HLS package's playlist
        /// goes on after EXT-X-DISCONTINUITY. Without a file holding media there, it starts anew.
        public var continues: Bool

        public init(
            duration: Duration? = nil, idleTimeout: Duration = .seconds(10), reconnects: Int? = 1,
            reconnectDelay: Duration = .seconds(1), maximumReconnectDelay: Duration = .seconds(30),
            overwrite: Bool = false, connection: RTMPConnection.Configuration = .recording, hls: HLSOutput? = nil,
            continues: Bool = false
        ) {
            self.continues = continues
            self.duration = duration
            self.idleTimeout = idleTimeout
            self.reconnects = reconnects
            self.reconnectDelay = reconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.overwrite = overwrite
            self.connection = connection
            self.hls = hls
        }
    }

    /// Where and how ``RTMPToHLS`` writes the live HLS package of a recording.
    public struct HLSOutput: Hashable, Sendable {
        /// The package's folder: `index.m3u8` and the segments.
        public var directory: String
        /// The segment length aimed at; segments end at the first key frame after it.
        public var segmentDuration: Duration

        public init(directory: String, segmentDuration: Duration = .seconds(4)) {
            self.directory = directory
            self.segmentDuration = segmentDuration
        }
    }

    /// Why a recording stopped.
    public enum EndReason: Hashable, Sendable, CustomStringConvertible {
        case durationReached
        case streamEnded(String)
        case idleTimeout
        /// The connection failed after media was recorded and could not be reopened.
        case connectionLost(String)
        case cancelled

        public var description: String {
            switch self {
            case .durationReached: "the requested duration was reached"
            case .streamEnded(let reason): "the server ended the stream (\(reason))"
            case .idleTimeout: "no media arrived for the idle timeout"
            case .connectionLost(let reason): "the connection was lost (\(reason))"
            case .cancelled: "interrupted"
            }
        }

        /// A short, stable name for machines: `duration`, `streamEnded`, `idleTimeout`,
        /// `connectionLost` or `cancelled`.
        public var code: String {
            switch self {
            case .durationReached: "duration"
            case .streamEnded: "streamEnded"
            case .idleTimeout: "idleTimeout"
            case .connectionLost: "connectionLost"
            case .cancelled: "cancelled"
            }
        }
    }

    /// How far a recording has come.
    public struct Progress: Hashable, Sendable {
        /// Seconds of media written.
        public var duration: Double
        /// Bytes in the file (or, without one, in the HLS segments).
        public var bytes: Int64
        public var videoFrames: Int
        public var audioFrames: Int
        /// Connections reopened after a drop.
        public var reconnects: Int
        /// HLS segments finished and listed in the playlist; 0 without ``Options/hls``.
        public var segments: Int = 0
        /// The RFC 6381 codecs the HLS package holds, once known; `nil` without ``Options/hls``.
        public var codecs: String? = nil
    }

    /// The outcome of a recording.
    public struct Summary: Hashable, Sendable {
        public var progress: Progress
        public var endReason: EndReason
        /// Where the recording is; `nil` when no media arrived and no file was left, or there was no file.
        public var output: String?
        /// The HLS package's folder; `nil` without ``Options/hls`` or when no media arrived.
        public var hlsDirectory: String? = nil
    }

    public let url: RTMPURL
    public let options: Options
    private let logger: Logger

    public init(url: RTMPURL, options: Options = Options(), logger: Logger = .disabled) {
        self.url = url
        self.options = options
        self.logger = logger
    }

    /// Records to `path` (and the HLS package of ``Options/hls``), reporting progress after each
    /// batch of messages.
    ///
    /// - Parameter path: The FLV file; `nil` to write only the HLS package.
    /// - Throws: ``RTMPError`` when the stream cannot be played or nothing arrived before the idle
    ///   timeout; ``SystemError`` when the file cannot be written, or (`EEXIST`) is there, or the
    ///   HLS folder holds a playlist, and ``Options/overwrite`` is off; ``MPEGTSError`` when the
    ///   stream's codecs cannot go into HLS. Nothing is left at `path`, beside it or in the HLS
    ///   folder then, unless media had been recorded.
    public func record(
        to path: String?, progress report: @Sendable (Progress) -> Void = { _ in }
    ) async throws -> Summary {
        precondition(path != nil || options.hls != nil, "a recording needs a file or an HLS package")
        if let path, !options.overwrite && !options.continues && access(path, F_OK) == 0 {
            throw SystemError(code: EEXIST, operation: "open", subject: path)
        }
        let hls = try options.hls.map {
            try RTMPToHLS(
                directory: $0.directory, segmentDuration: $0.segmentDuration, overwrite: options.overwrite,
                continuing: options.continues)
        }
        let continued = options.continues ? try path.flatMap { try FLVFileWriter(continuing: $0) } : nil
        let writer = try continued ?? path.map { try FLVFileWriter(path: $0 + ".part", exclusive: true) }
        let limit = options.duration.map {
            $0.components.seconds * 1_000 + $0.components.attoseconds / 1_000_000_000_000_000
        }
        var machine =
            continued?.continuation.map {
                RecordingStateMachine(durationLimit: limit, continuingAfter: $0.lastTimestamp, mediaEnd: $0.mediaEnd)
            } ?? RecordingStateMachine(durationLimit: limit)
        var backoff = ReconnectBackoff(
            limit: options.reconnects, initialDelay: options.reconnectDelay,
            maximumDelay: options.maximumReconnectDelay)
        var reconnects = 0
        var streamOpened = false
        var renamed = continued != nil
        // The drop that reconnecting is trying to recover from.
        var drop: RTMPError?
        var endReason: EndReason?
        func progress() -> Progress {
            Progress(
                duration: machine.duration, bytes: writer?.size ?? hls?.bytesWritten ?? 0,
                videoFrames: machine.videoFrames, audioFrames: machine.audioFrames, reconnects: reconnects,
                segments: hls?.segmentCount ?? 0, codecs: hls?.codecs)
        }
        // The final name arrives with the first media.
        func renameOnMedia() throws {
            guard machine.hasStarted, !renamed else { return }
            if let writer, let path { try writer.move(to: path, replacing: options.overwrite) }
            renamed = true
        }
        func fail(_ error: any Error) throws -> Never {
            if renamed { try? writer?.finish(duration: machine.duration) } else { writer?.discard() }
            // The playlist ends whatever ended the recording; with no media, nothing was written.
            try? hls?.finish()
            throw error
        }

        // A continued file that reached the duration already: the run that wrote it ended before it could say so.
        if let limit, machine.hasStarted && machine.lastTimestamp >= limit { endReason = .durationReached }
        while endReason == nil {
            let connection = RTMPConnection(url: url, role: .play, configuration: options.connection, logger: logger)
            do {
                try await connection.open()
                if streamOpened { reconnects += 1 }
                streamOpened = true
                var lastReport = ContinuousClock.now
                while endReason == nil {
                    if Task.isCancelled {
                        endReason = .cancelled
                        break
                    }
                    let framesBefore = machine.videoFrames + machine.audioFrames
                    for event in try await connection.nextMessages(idleTimeout: options.idleTimeout)
                    where endReason == nil {
                        switch event {
                        case .ended(let reason):
                            endReason = .streamEnded(reason)
                        case .media(let message):
                            for action in machine.receive(message) {
                                switch action {
                                case .writeMetadata(let properties): try writer?.writeMetadata(properties)
                                case .writeTag(let tag):
                                    try writer?.write(tag)
                                    try hls?.write(tag)
                                case .durationReached: endReason = .durationReached
                                }
                            }
                        }
                    }
                    if machine.videoFrames + machine.audioFrames > framesBefore {
                        backoff.reset()
                        drop = nil
                    }
                    try renameOnMedia()
                    if ContinuousClock.now - lastReport >= .milliseconds(500) {
                        lastReport = ContinuousClock.now
                        // What a report counts is on disk: a process killed after it loses none of it.
                        try writer?.flush()
                        report(progress())
                    }
                }
                await connection.finish()
            } catch let error as RTMPError {
                await connection.close()
                if Task.isCancelled {
                    endReason = .cancelled
                } else if error.kind == .idleTimeout && machine.hasStarted {
                    endReason = .idleTimeout
                } else if streamOpened && Self.reconnectable.contains(error.kind), let delay = backoff.nextDelay() {
                    logger.warning("the connection dropped (\(error)); reconnecting in \(delay)")
                    drop = drop ?? error
                    machine.reconnected()
                    hls?.reconnected()
                    do { try await Task.sleep(for: delay) } catch { endReason = .cancelled }
                } else if machine.hasStarted {
                    // What was recorded stays a complete file: the stream ended, if not cleanly.
                    endReason = .connectionLost(drop.map { "\($0); reconnecting failed: \(error)" } ?? "\(error)")
                } else {
                    try fail(error)
                }
            } catch {
                await connection.close()
                if Task.isCancelled && !(error is SystemError) { endReason = .cancelled } else { try fail(error) }
            }
        }
        guard machine.hasStarted else {
            writer?.discard()
            try? hls?.finish()
            if case .streamEnded(let reason) = endReason { throw RTMPError.noMedia(url.streamName, reason) }
            return Summary(progress: progress(), endReason: endReason!, output: nil)
        }
        do { try renameOnMedia() } catch { try fail(error) }
        do { try hls?.finish() } catch { try fail(error) }
        try writer?.finish(duration: machine.duration)
        let final = progress()
        report(final)
        return Summary(progress: final, endReason: endReason!, output: path, hlsDirectory: hls?.directory)
    }

    /// Failures of the connection, not of the stream, after which it is worth connecting again.
    static let reconnectable: Set<RTMPError.Kind> = [
        .connectionClosed, .connectionLost, .connectionFailed, .connectTimedOut, .tlsHandshakeFailed, .handshakeFailed,
        .handshakeTimedOut, .responseTimeout,
    ]
}
