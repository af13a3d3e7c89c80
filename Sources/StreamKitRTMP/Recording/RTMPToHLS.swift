import StreamKitCore
import StreamKitFLV
import StreamKitMPEGTS

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Remuxes the tags of a live recording into an HLS package while it records: MPEG-TS segments
/// cut at key frames and a live media playlist, rewritten whole (a temporary file, then a rename)
/// after each segment, so that a player following it never reads a torn list.
///
/// ```
/// DIR/index.m3u8     EXT-X-PLAYLIST-TYPE:EVENT; EXT-X-ENDLIST once finish() ran
/// DIR/00000.ts       segments named by media sequence number
/// ```
///
/// Feed it the tags ``RecordingStateMachine`` returns (``RTMPRecorder`` does, with
/// ``RTMPRecorder/Options/hls``): their timestamps continue across reconnects, and a changed
/// sequence header starts a new segment after EXT-X-DISCONTINUITY. Bytes go out through one
/// buffer, written when a segment ends or the buffer reaches a megabyte; memory does not grow
/// with the recording except for the playlist's lines.
///
/// Owned by one task.
public final class RTMPToHLS {
    /// The media playlist's name in the directory.
    public static let playlistName = "index.m3u8"
    /// Bytes buffered before they are written to the open segment.
    static let flushSize = 1 << 20

    /// The package's folder.
    public let directory: String
    /// The playlist as last written.
    public private(set) var playlist: LiveMediaPlaylist
    /// Segments finished and listed in the playlist.
    public var segmentCount: Int { playlist.segmentCount }
    /// Whether ``finish()`` has run.
    public private(set) var isFinished = false
    /// Bytes written to finished and open segments.
    public private(set) var bytesWritten: Int64 = 0
    /// The RFC 6381 codecs of the stream so far (`avc1.64001F,mp4a.40.2`), for CODECS.
    public var codecs: String? { segmenter.muxer.codecs }
    private var segmenter: TransportStreamSegmenter
    private var buffer: [UInt8] = []
    private var segment: Int32 = -1
    private var nextDiscontinuity = false
    private var timeline = RTMPTimelineUnwrapper()
    /// Whether the folder holds an earlier part of this recording, which stays.
    private var continuesEarlier = false

    /// Prepares to write into `directory`, which is made (0700, with its parents) with the
    /// first segment: a recording that gets no media leaves nothing behind.
    ///
    /// - Parameters:
    ///   - segmentDuration: The segment length aimed at; segments end at the first key frame after it.
    ///   - overwrite: Whether a playlist already in `directory` is replaced; when false it fails with `EEXIST`.
    ///   - continuing: Whether a playlist already in `directory` is continued: its segments stay
    ///     listed and the next one follows after EXT-X-DISCONTINUITY (a recording resumed by a new
    ///     process). Without a readable media playlist there, the package starts afresh.
    /// - Throws: ``SystemError`` when the folder cannot be made, or holds a playlist and neither
    ///   `overwrite` nor `continuing` is on.
    public init(
        directory: String, segmentDuration: Duration, overwrite: Bool = false, continuing: Bool = false
    ) throws(SystemError) {
        let milliseconds =
            segmentDuration.components.seconds * 1_000
            + segmentDuration.components.attoseconds / 1_000_000_000_000_000
        precondition(milliseconds > 0, "a segment duration must be positive")
        self.directory = directory
        let playlistPath = directory + "/" + Self.playlistName
        if !overwrite && !continuing && access(playlistPath, F_OK) == 0 {
            throw SystemError(code: EEXIST, operation: "open", subject: playlistPath)
        }
        segmenter = TransportStreamSegmenter(targetDuration: milliseconds)
        playlist = LiveMediaPlaylist(targetDuration: Double(milliseconds) / 1_000)
        if continuing, let bytes = Self.contents(of: playlistPath),
            let earlier = LiveMediaPlaylist(continuing: bytes, targetDuration: Double(milliseconds) / 1_000)
        {
            playlist = earlier
            segmenter.maximumDuration = Int64(playlist.targetDuration) * 1_000
            continuesEarlier = true
            nextDiscontinuity = true
        }
        buffer.reserveCapacity(Self.flushSize + (64 << 10))
    }

    deinit { if segment >= 0 { close(segment) } }

    /// The name of segment `index`: its media sequence number, five digits or more.
    public static func segmentName(_ index: Int) -> String {
        let digits = String(index)
        return String(repeating: "0", count: max(0, 5 - digits.count)) + digits + ".ts"
    }

    /// Remuxes one tag.
    ///
    /// - Throws: ``MPEGTSError`` when the media cannot go into MPEG-TS; ``SystemError`` when a
    ///   file cannot be written.
    public func write(_ tag: FLVTag) throws {
        precondition(!isFinished, "a tag after finish()")
        let time = timeline.extend(RTMPTimestamp(tag.timestamp))
        if let cut = try segmenter.append(tag, time: time, into: &buffer) {
            try endSegment(upTo: cut.offset, duration: cut.duration)
            nextDiscontinuity = cut.discontinuity
        }
        if buffer.count >= Self.flushSize { try flush(upTo: buffer.count) }
    }

    /// The stream continues on a new connection: its timestamps continue after the media written
    /// so far (``TransportStreamSegmenter/streamRestarted()``).
    public func reconnected() { segmenter.streamRestarted() }

    /// Writes out the open segment and the playlist with `EXT-X-ENDLIST`; with no media written,
    /// writes nothing.
    ///
    /// - Throws: ``SystemError`` when a file cannot be written.
    public func finish() throws(SystemError) {
        guard !isFinished else { return }
        isFinished = true
        if let duration = segmenter.finish() { try endSegment(upTo: buffer.count, duration: duration) }
        guard playlist.segmentCount > 0 else { return }
        playlist.end()
        try writePlaylist()
    }

    private func endSegment(upTo offset: Int, duration: Double) throws(SystemError) {
        try flush(upTo: offset)
        if segment >= 0 {
            close(segment)
            segment = -1
        }
        let index = playlist.segmentCount
        playlist.append(
            uri: Self.segmentName(index), duration: duration, discontinuity: nextDiscontinuity,
            keyFrameInterval: segmenter.keyFrameInterval)
        segmenter.maximumDuration = Int64(playlist.targetDuration) * 1_000
        nextDiscontinuity = false
        try writePlaylist()
    }

    /// Writes the first `count` buffered bytes to the open segment (opening the next one first)
    /// and keeps the rest.
    private func flush(upTo count: Int) throws(SystemError) {
        guard count > 0 else { return }
        if segment < 0 {
            try PrivateFiles.createDirectory(directory)
            if bytesWritten == 0 && !continuesEarlier { removeEarlierPackage() }
            let path = directory + "/" + Self.segmentName(playlist.segmentCount)
            segment = PrivateFiles.open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            guard segment >= 0 else { throw .current("open", subject: path) }
        }
        let failed = buffer.withUnsafeBytes { bytes in
            var done = 0
            while done < count {
                let written = systemWrite(segment, bytes.baseAddress! + done, count - done)
                if written < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                done += written
            }
            return false
        }
        if failed { throw .current("write", subject: directory + "/" + Self.segmentName(playlist.segmentCount)) }
        bytesWritten += Int64(count)
        buffer.removeSubrange(0..<count)
        segmenter.outputConsumed(count)
    }

    /// With the first media, an earlier package in the folder (one `overwrite` replaces, or the
    /// segments of a recording killed before its first playlist) goes: its playlist first, so no
    /// player reads it while its segments are replaced, then every file named as a segment.
    private func removeEarlierPackage() {
        unlink(directory + "/" + Self.playlistName)
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if Self.isSegmentName(name) { names.append(name) }
        }
        for name in names { unlink(directory + "/" + name) }
    }

    /// The bytes of the file at `path`, or `nil` when it cannot be read.
    private static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// Whether `name` is one ``segmentName(_:)`` gives.
    static func isSegmentName(_ name: String) -> Bool {
        guard name.hasSuffix(".ts") else { return false }
        let number = name.utf8.dropLast(3)
        return number.count >= 5 && number.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private func writePlaylist() throws(SystemError) {
        let path = directory + "/" + Self.playlistName
        try AtomicFile.write(Array(playlist.serialized().utf8), to: path, temporaryPath: path + ".tmp")
    }
}

private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
