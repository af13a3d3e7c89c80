import StreamKitCore
import StreamKitFLV

/// Records a live RTMP stream to an FLV file, the job of `streamkit rtmp record`.
///
/// It plays the stream, feeds a ``RecordingStateMachine`` and writes what it returns. The
/// recording stops at the requested duration, when the server ends the stream, or when no media
/// arrives for the idle timeout (a live stream nobody publishes still "starts" on nginx-rtmp).
/// A connection that drops without the server ending the stream is reopened, as many times as
/// ``Options/reconnects`` allows, and the file continues.
public struct RTMPRecorder: Sendable {
    public struct Options: Hashable, Sendable {
        /// Stop after this much media time; `nil` records until the stream ends.
        public var duration: Duration?
        /// Stop (or fail, if nothing was recorded) when no media arrives for this long.
        public var idleTimeout: Duration
        /// How many times a dropped connection is reopened.
        public var reconnects: Int
        public var connection: RTMPConnection.Configuration

        public init(
            duration: Duration? = nil, idleTimeout: Duration = .seconds(10), reconnects: Int = 1,
            connection: RTMPConnection.Configuration = .recording
        ) {
            self.duration = duration
            self.idleTimeout = idleTimeout
            self.reconnects = reconnects
            self.connection = connection
        }
    }

    /// Why a recording stopped.
    public enum EndReason: Hashable, Sendable, CustomStringConvertible {
        case durationReached
        case streamEnded(String)
        case idleTimeout
        case cancelled

        public var description: String {
            switch self {
            case .durationReached: "the requested duration was reached"
            case .streamEnded(let reason): "the server ended the stream (\(reason))"
            case .idleTimeout: "no media arrived for the idle timeout"
            case .cancelled: "interrupted"
            }
        }
    }

    /// How far a recording has come.
    public struct Progress: Hashable, Sendable {
        /// Seconds of media written.
        public var duration: Double
        /// Bytes in the file.
        public var bytes: Int64
        public var videoFrames: Int
        public var audioFrames: Int
        /// Connections reopened after a drop.
        public var reconnects: Int
    }

    /// The outcome of a recording.
    public struct Summary: Hashable, Sendable {
        public var progress: Progress
        public var endReason: EndReason
    }

    public let url: RTMPURL
    public let options: Options
    private let logger: Logger

    public init(url: RTMPURL, options: Options = Options(), logger: Logger = .disabled) {
        self.url = url
        self.options = options
        self.logger = logger
    }

    /// Records to `path`, reporting progress after each batch of messages.
    ///
    /// - Throws: ``RTMPError`` when the stream cannot be played or nothing arrived before the idle
    ///   timeout; ``SystemError`` when the file cannot be written.
    public func record(
        to path: String, progress report: @Sendable (Progress) -> Void = { _ in }
    ) async throws -> Summary {
        let writer = try FLVFileWriter(path: path)
        var machine = RecordingStateMachine(
            durationLimit: options.duration.map {
                $0.components.seconds * 1_000 + $0.components.attoseconds / 1_000_000_000_000_000
            })
        var reconnectsLeft = options.reconnects
        var reconnects = 0
        var streamOpened = false
        var endReason: EndReason?
        func progress() -> Progress {
            Progress(
                duration: machine.duration, bytes: writer.size, videoFrames: machine.videoFrames,
                audioFrames: machine.audioFrames, reconnects: reconnects)
        }

        while endReason == nil {
            let connection = RTMPConnection(url: url, role: .play, configuration: options.connection, logger: logger)
            do {
                try await connection.open()
                streamOpened = true
                var lastReport = ContinuousClock.now
                while endReason == nil {
                    if Task.isCancelled {
                        endReason = .cancelled
                        break
                    }
                    for event in try await connection.nextMessages(idleTimeout: options.idleTimeout)
                    where endReason == nil {
                        switch event {
                        case .ended(let reason):
                            endReason = .streamEnded(reason)
                        case .media(let message):
                            for action in machine.receive(message) {
                                switch action {
                                case .writeMetadata(let properties): try writer.writeMetadata(properties)
                                case .writeTag(let tag): try writer.write(tag)
                                case .durationReached: endReason = .durationReached
                                }
                            }
                        }
                    }
                    if ContinuousClock.now - lastReport >= .milliseconds(500) {
                        lastReport = ContinuousClock.now
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
                } else if (error.kind == .connectionClosed || error.kind == .connectionLost) && reconnectsLeft > 0
                    && streamOpened
                {
                    reconnectsLeft -= 1
                    reconnects += 1
                    logger.warning("the connection dropped (\(error)); reconnecting")
                    machine.reconnected()
                } else {
                    try? writer.finish(duration: machine.duration)
                    throw error
                }
            } catch {
                await connection.close()
                try? writer.finish(duration: machine.duration)
                throw error
            }
        }
        try writer.finish(duration: machine.duration)
        if !machine.hasStarted, case .streamEnded(let reason) = endReason {
            throw RTMPError.noMedia(url.streamName, reason)
        }
        let final = progress()
        report(final)
        return Summary(progress: final, endReason: endReason!)
    }
}
