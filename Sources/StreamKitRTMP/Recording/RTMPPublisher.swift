import StreamKitCore
import StreamKitFLV

/// Paces a published stream by its timestamps: each tag leaves when as much wall-clock time has
/// passed since the first as media time has (`--realtime`, what `ffmpeg -re` does).
///
/// Time goes in ticks: a tag due within the current tick leaves now, with the others due then,
/// so that the tags of one tick (a video frame and the audio frames around it) go out in one
/// write after one wake-up rather than one each.
public struct PublishPacer: Hashable, Sendable {
    /// How early a tag may leave.
    public let tick: Duration
    private var unwrapper = RTMPTimelineUnwrapper()
    private var first: Int64?

    public init(tick: Duration = .milliseconds(10)) {
        self.tick = tick
    }

    /// How long to wait before sending a tag stamped `timestamp`, `elapsed` after the first tag
    /// was sent: zero when it is due within the tick.
    public mutating func delay(before timestamp: UInt32, elapsed: Duration) -> Duration {
        let position = unwrapper.extend(RTMPTimestamp(timestamp))
        let start = first ?? position
        first = start
        let due = Duration.milliseconds(position - start)
        return due > elapsed + tick ? due - elapsed : .zero
    }
}

/// Orders the start of a published file so that metadata and sequence headers go first, as
/// players joining the stream need them before any frame.
public struct PublishPreamble: Sendable {
    /// The tags read ahead, in file order.
    private var tags: [FLVTag] = []

    public init() {}

    /// Whether `tag` ends the look-ahead: the first audio or video frame that is not a sequence header.
    public static func isMediaFrame(_ tag: FLVTag) -> Bool {
        switch tag.type {
        case .video: !(FLVVideoTagHeader(data: tag.data)?.isSequenceHeader ?? false)
        case .audio: !(FLVAudioTagHeader(data: tag.data)?.isSequenceHeader ?? false)
        default: false
        }
    }

    /// Adds a tag read ahead.
    public mutating func append(_ tag: FLVTag) { tags.append(tag) }

    /// The tags read ahead, reordered: `onMetaData`, the video sequence header, the audio
    /// sequence header, then everything else in file order.
    public func ordered() -> [FLVTag] {
        func isMetadata(_ tag: FLVTag) -> Bool {
            tag.type == .scriptData && (try? FLVScriptData(data: tag.data))?.name == FLVScriptData.onMetaData
        }
        func isSequenceHeader(_ tag: FLVTag, _ type: FLVTagType) -> Bool {
            tag.type == type && !Self.isMediaFrame(tag)
        }
        let metadata = tags.filter(isMetadata).prefix(1)
        let video = tags.filter { isSequenceHeader($0, .video) }
        let audio = tags.filter { isSequenceHeader($0, .audio) }
        let rest = tags.filter { !isMetadata($0) && !isSequenceHeader($0, .video) && !isSequenceHeader($0, .audio) }
        return Array(metadata) + video + audio + rest
    }
}

/// Publishes an FLV file to an RTMP server, the job of `streamkit rtmp publish`.
public struct RTMPPublisher: Sendable {
    public struct Options: Hashable, Sendable {
        /// Send tags at the pace of their timestamps; otherwise as fast as the server reads.
        public var realtime: Bool
        public var connection: RTMPConnection.Configuration

        public init(realtime: Bool = false, connection: RTMPConnection.Configuration = .init()) {
            self.realtime = realtime
            self.connection = connection
        }
    }

    /// How far publishing has come.
    public struct Progress: Hashable, Sendable {
        /// Tags sent.
        public var tags: Int
        /// Bytes of the file read.
        public var fileBytes: Int64
        /// The file's size.
        public var fileSize: Int64
        /// Media time sent, in seconds.
        public var mediaSeconds: Double
        /// Bytes written to the server.
        public var bytesSent: Int64
        /// Writes to the socket (fewer than tags when sends are batched).
        public var writes: Int = 0
    }

    public let url: RTMPURL
    public let options: Options
    private let logger: Logger

    public init(url: RTMPURL, options: Options = Options(), logger: Logger = .disabled) {
        self.url = url
        self.options = options
        self.logger = logger
    }

    /// Publishes the file at `path`.
    ///
    /// - Throws: ``FLVError`` or ``SystemError`` for the file; ``RTMPError`` for the server.
    public func publish(
        file path: String, progress report: @Sendable (Progress) -> Void = { _ in }
    ) async throws
        -> Progress
    {
        let file = try FLVFileReader(path: path)
        // Read the file's start before connecting, so a file that is not FLV fails without one.
        var preamble = PublishPreamble()
        var lookAhead = 0
        while lookAhead < 64, let tag = try file.next() {
            preamble.append(tag)
            lookAhead += 1
            if PublishPreamble.isMediaFrame(tag) { break }
        }
        // Announce the Enhanced RTMP codecs the file uses, and only those, besides any asked for.
        var configuration = options.connection
        configuration.client.enhancedCodecs = configuration.client.enhancedCodecs.union(
            EnhancedCodecs(tags: preamble.ordered()))
        let connection = RTMPConnection(url: url, role: .publish, configuration: configuration, logger: logger)
        var pacer = PublishPacer()
        var progress = Progress(tags: 0, fileBytes: 0, fileSize: file.fileSize, mediaSeconds: 0, bytesSent: 0)
        var unwrapper = RTMPTimelineUnwrapper()
        var firstPosition: Int64?
        let clock = ContinuousClock()
        var start: ContinuousClock.Instant?
        var lastReport = clock.now
        do {
            try await connection.open()
            var pending = preamble.ordered()[...]
            while true {
                let next: FLVTag
                if let queued = pending.popFirst() {
                    next = queued
                } else if let tag = try file.next() {
                    next = tag
                } else {
                    break
                }
                try Task.checkCancellation()
                if options.realtime && next.type != .scriptData {
                    let began = start ?? clock.now
                    start = began
                    let wait = pacer.delay(before: next.timestamp, elapsed: clock.now - began)
                    if wait > .zero {
                        try await connection.flush()
                        try await Task.sleep(for: wait)
                    }
                }
                // What is due goes out together: the flush before the next wait sends it.
                try await connection.send(next)
                progress.tags += 1
                progress.fileBytes += Int64(next.size + 4)
                if next.type != .scriptData {
                    let position = unwrapper.extend(RTMPTimestamp(next.timestamp))
                    let origin = firstPosition ?? position
                    firstPosition = origin
                    progress.mediaSeconds = max(progress.mediaSeconds, Double(position - origin) / 1_000)
                }
                if clock.now - lastReport >= .milliseconds(500) {
                    lastReport = clock.now
                    progress.bytesSent = await connection.bytesSent
                    report(progress)
                }
            }
            try await connection.flush()
            await connection.finish()
        } catch {
            await connection.close()
            throw error
        }
        progress.fileBytes = file.fileSize
        progress.bytesSent = await connection.bytesSent
        progress.writes = await connection.writes
        report(progress)
        return progress
    }
}
