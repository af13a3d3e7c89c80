import StreamKitCore
import StreamKitFLV

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What an FLV file left by an earlier recording holds, read tag header by tag header (the
/// media itself is skipped): where its last whole tag ends, its media times, and where
/// `onMetaData`'s duration and file size are, so that ``FLVFileWriter/init(continuing:)`` can
/// cut off a torn tag and append.
struct FLVFileScan: Hashable, Sendable {
    /// The end of the last whole tag (with its PreviousTagSize): where appending starts.
    var validEnd: Int64 = 0
    /// The latest audio or video timestamp, in milliseconds; `nil` when the file has no media.
    var lastTimestamp: Int64?
    /// The interval between the last two video (else audio) frames, in milliseconds, or 0.
    var frameInterval: Int64 = 0
    /// Where the 8-byte numbers of `onMetaData`'s `duration` and `filesize` start.
    var durationOffset: Int64?
    var fileSizeOffset: Int64?
    var sawAudio = false
    var sawVideo = false

    /// The header, PreviousTagSize0, and a tag header: the fixed sizes read.
    private static let fileHeaderSize: Int64 = 13
    private static let tagHeaderSize = 11

    /// Scans the file open as `descriptor`, of `size` bytes.
    ///
    /// - Returns: `nil` when the file does not start with an FLV header.
    init?(descriptor: Int32, size: Int64) {
        var header = [UInt8](repeating: 0, count: Int(Self.fileHeaderSize))
        guard Self.read(descriptor, into: &header, at: 0), header[0] == 0x46, header[1] == 0x4C, header[2] == 0x56
        else { return nil }
        validEnd = Self.fileHeaderSize
        var last: [FLVTagType: (previous: Int64?, latest: Int64)] = [:]
        var tagHeader = [UInt8](repeating: 0, count: Self.tagHeaderSize)
        var trailer = [UInt8](repeating: 0, count: 4)
        while validEnd + Int64(Self.tagHeaderSize) + 4 <= size {
            guard Self.read(descriptor, into: &tagHeader, at: validEnd) else { break }
            let dataSize = Int(tagHeader[1]) << 16 | Int(tagHeader[2]) << 8 | Int(tagHeader[3])
            let end = validEnd + Int64(Self.tagHeaderSize + dataSize + 4)
            guard end <= size, Self.read(descriptor, into: &trailer, at: end - 4) else { break }
            let previousSize = Int(trailer[0]) << 24 | Int(trailer[1]) << 16 | Int(trailer[2]) << 8 | Int(trailer[3])
            guard previousSize == Self.tagHeaderSize + dataSize else { break }
            let timestamp =
                Int64(tagHeader[7]) << 24 | Int64(tagHeader[4]) << 16 | Int64(tagHeader[5]) << 8 | Int64(tagHeader[6])
            let dataStart = validEnd + Int64(Self.tagHeaderSize)
            let type = FLVTagType(rawValue: tagHeader[0] & 0x1F)
            if type == .audio || type == .video {
                if type == .audio { sawAudio = true } else { sawVideo = true }
                lastTimestamp = max(lastTimestamp ?? 0, timestamp)
                if let latest = last[type]?.latest {
                    if timestamp > latest { last[type] = (latest, timestamp) }
                } else {
                    last[type] = (nil, timestamp)
                }
            } else if type == .scriptData && durationOffset == nil && dataSize <= 1 << 16 {
                var data = [UInt8](repeating: 0, count: dataSize)
                if Self.read(descriptor, into: &data, at: dataStart) {
                    durationOffset = FLVFileWriter.numberOffset(of: "duration", in: data).map { dataStart + Int64($0) }
                    fileSizeOffset = FLVFileWriter.numberOffset(of: "filesize", in: data).map { dataStart + Int64($0) }
                }
            }
            validEnd = end
        }
        for type in [FLVTagType.video, .audio] {
            if let pair = last[type], let previous = pair.previous {
                frameInterval = min(pair.latest - previous, 1_000)
                break
            }
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`.
    private static func read(_ descriptor: Int32, into buffer: inout [UInt8], at offset: Int64) -> Bool {
        var done = 0
        while done < buffer.count {
            let count = buffer.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            done += count
        }
        return true
    }
}
