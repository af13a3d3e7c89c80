import Foundation
import StreamKitCore
import StreamKitHLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why an export failed, naming the file.
public struct PackageExportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The explanation, with the file concerned.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }

    /// The export was stopped (``PackageExporter/concatenate(_:of:to:progress:reading:isCancelled:)``).
    public static let cancelled = PackageExportError("the export was stopped")
}

/// A downloaded package read back from disk: its `index.m3u8` and the renditions it lists.
public struct HLSPackage: Sendable {
    /// One rendition of the package.
    public struct Rendition: Sendable {
        /// Its folder.
        public var folder: String
        /// `video`, `audio` or `subtitles`.
        public var type: String
        /// LANGUAGE, for alternative renditions.
        public var language: String?
        /// Its media playlist.
        public var playlist: MediaPlaylist
    }

    /// The package folder.
    public let directory: URL
    /// The variant's own rendition (video, usually with audio).
    public let main: Rendition
    /// Alternative audio renditions.
    public let audio: [Rendition]
    /// Subtitle renditions.
    public let subtitles: [Rendition]

    /// Reads the package in `directory`.
    ///
    /// - Throws: ``PackageExportError`` when `index.m3u8` or a media playlist is missing, does not
    ///   parse, or points outside the package.
    public init(directory: URL) throws(PackageExportError) {
        let root = directory.standardizedFileURL
        let index = root.appendingPathComponent(PackageLayout.indexName)
        guard let data = FileManager.default.contents(atPath: index.path) else {
            throw PackageExportError("\(index.path): no such file (has the download started?)")
        }
        let master: MultivariantPlaylist
        do {
            guard case .multivariant(let parsed) = try Playlist.parse(data).playlist else {
                throw PackageExportError("\(index.path) is not a multivariant playlist")
            }
            master = parsed
        } catch let error as PackageExportError {
            throw error
        } catch {
            throw PackageExportError("\(index.path): \(error)")
        }
        guard let variant = master.variants.first else { throw PackageExportError("\(index.path) lists no variant") }
        func load(_ uri: String, type: String, language: String?) throws(PackageExportError) -> Rendition {
            let parts = uri.split(separator: "/").map(String.init)
            guard parts.count == 2, PackageLayout.isContained(uri) else {
                throw PackageExportError("\(index.path) refers to \(uri), which is not a rendition of the package")
            }
            let url = root.appendingPathComponent(uri)
            guard let bytes = FileManager.default.contents(atPath: url.path) else {
                throw PackageExportError("\(url.path): no such file")
            }
            do {
                guard case .media(let playlist) = try Playlist.parse(bytes).playlist else {
                    throw PackageExportError("\(url.path) is not a media playlist")
                }
                // A package still downloading (or stopped) lists its completed head without
                // EXT-X-ENDLIST: exporting it would make a file of part of the stream.
                guard playlist.hasEndList else {
                    throw PackageExportError(
                        "\(url.path) has no EXT-X-ENDLIST: the download is not complete (resume it, then export)")
                }
                return Rendition(folder: parts[0], type: type, language: language, playlist: playlist)
            } catch let error as PackageExportError {
                throw error
            } catch {
                throw PackageExportError("\(url.path): \(error)")
            }
        }
        self.directory = root
        main = try load(variant.uri, type: "video", language: nil)
        var audio: [Rendition] = []
        var subtitles: [Rendition] = []
        for rendition in master.renditions {
            guard let uri = rendition.uri else { continue }
            switch rendition.type {
            case .audio: audio.append(try load(uri, type: "audio", language: rendition.language))
            case .subtitles: subtitles.append(try load(uri, type: "subtitles", language: rendition.language))
            default: break
            }
        }
        self.audio = audio
        self.subtitles = subtitles
    }
}

/// How far an export has come.
public struct PackageExportProgress: Hashable, Sendable {
    /// Segments written.
    public var segmentsDone: Int
    /// Segments to write.
    public var segmentsTotal: Int
    /// Bytes written.
    public var bytesWritten: Int64
    /// Bytes of segments read so far (before decryption).
    public var bytesRead: Int64 = 0
    /// Bytes of segments to read in all.
    public var bytesTotal: Int64 = 0

    /// Done, 0...1, by segment bytes read: a step is at most 1/40 of the whole (reads are sized
    /// for it), so progress moves in steps of 2.5% or less however few the segments.
    public var fractionCompleted: Double {
        guard bytesTotal > 0 else { return segmentsTotal == 0 ? 1 : Double(segmentsDone) / Double(segmentsTotal) }
        return min(1, Double(bytesRead) / Double(bytesTotal))
    }
}

/// The container of a rendition's segments.
public enum SegmentContainer: String, Sendable, Hashable {
    /// MPEG-2 transport stream.
    case transportStream = "ts"
    /// Fragmented MP4 (an init section and fragments).
    case fragmentedMP4 = "mp4"
}

/// Writes a package rendition as one file by concatenation, streaming: one segment open at a time
/// (plus the output), read 1 MB at a time, AES-128 segments decrypted on the way, gaps left out.
/// Fragmented MP4 becomes the init section followed by every fragment.
public enum PackageExporter {
    /// The container of `rendition`'s segments: fragmented MP4 when its map starts with an ISO
    /// BMFF `ftyp` box, transport stream otherwise.
    public static func container(of rendition: HLSPackage.Rendition, in package: HLSPackage) -> SegmentContainer {
        guard let map = rendition.playlist.resolvedSegments().first?.map else { return .transportStream }
        let path = package.directory.appendingPathComponent(rendition.folder + "/" + map.uri).path
        guard let handle = FileHandle(forReadingAtPath: path) else { return .transportStream }
        defer { try? handle.close() }
        if let range = map.byteRange { try? handle.seek(toOffset: UInt64(range.lowerBound)) }
        let head = (try? handle.read(upToCount: 8)) ?? Data()
        return head.count == 8 && Array(head[4..<8]) == Array("ftyp".utf8) ? .fragmentedMP4 : .transportStream
    }

    /// Concatenates `rendition` into `destination` (written under a temporary name, then renamed).
    ///
    /// - Parameters:
    ///   - rendition: The rendition to write.
    ///   - package: The package it belongs to.
    ///   - destination: The output file.
    ///   - progress: Called after each segment, once its file is closed.
    ///   - reading: Called after each read inside a segment (at most 1/40 of all segment bytes),
    ///     for progress in fine steps.
    ///   - isCancelled: Asked before each read; `true` stops the export (the temporary file is
    ///     removed) with ``PackageExportError/cancelled``.
    /// - Returns: The bytes written.
    /// - Throws: ``PackageExportError`` naming the segment or file that failed, or when the init
    ///   section changes mid-stream in fragmented MP4 (a concatenation would not play).
    @discardableResult
    public static func concatenate(
        _ rendition: HLSPackage.Rendition, of package: HLSPackage, to destination: URL,
        progress: (PackageExportProgress) -> Void = { _ in }, reading: (PackageExportProgress) -> Void = { _ in },
        isCancelled: () -> Bool = { false }
    ) throws(PackageExportError) -> Int64 {
        let folder = package.directory.appendingPathComponent(rendition.folder)
        let segments = rendition.playlist.resolvedSegments().filter { !$0.isGap }
        let fragmented = container(of: rendition, in: package) == .fragmentedMP4
        func file(_ uri: String) throws(PackageExportError) -> String {
            guard PackageLayout.isContained(rendition.folder + "/" + uri), !uri.contains("/") else {
                throw PackageExportError("\(rendition.folder)/index.m3u8 refers to \(uri), outside its folder")
            }
            return folder.appendingPathComponent(uri).path
        }
        var report = PackageExportProgress(segmentsDone: 0, segmentsTotal: segments.count, bytesWritten: 0)
        for segment in segments {
            if let range = segment.byteRange {
                report.bytesTotal += range.count
            } else if let path = try? file(segment.uri) {
                report.bytesTotal += PackageFiles.size(path) ?? 0
            }
        }
        // Reads of at most 1/40 of the whole: progress steps stay small for a short package.
        let readSize = Int(min(1 << 20, max(4 << 10, report.bytesTotal / 40)))
        let temporary = destination.path + PackageLayout.temporarySuffix
        let output = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw PackageExportError("\(SystemError.current("open", subject: temporary))") }
        var written: Int64 = 0
        var keys: [String: [UInt8]] = [:]
        var writtenMap: (uri: String, range: ByteRange?, bytes: [UInt8])?
        do throws(PackageExportError) {
            for (index, segment) in segments.enumerated() {
                if let map = segment.map, writtenMap?.uri != map.uri || writtenMap?.range != map.byteRange {
                    var bytes: [UInt8] = []
                    try copy(file(map.uri), range: map.byteRange, decryption: nil, readSize: readSize) {
                        (chunk) throws(PackageExportError) in bytes += chunk
                    }
                    if fragmented, let previous = writtenMap {
                        guard previous.bytes == bytes else {
                            throw PackageExportError(
                                "the init section changes at segment \(segment.mediaSequence) (\(map.uri)): one "
                                    + "MP4 file cannot hold both (a stream copy by ffmpeg cannot either); the "
                                    + "package plays as it is through `streamkit serve`")
                        }
                    } else {
                        // Fragmented MP4 takes its init section once; a transport stream each time it changes.
                        try write(bytes, to: output, at: &written, name: temporary)
                    }
                    writtenMap = (map.uri, map.byteRange, bytes)
                }
                var decryption: (key: [UInt8], iv: [UInt8])?
                if let key = segment.identityKey, key.method == .aes128, let uri = key.uri {
                    if keys[uri] == nil {
                        guard let data = FileManager.default.contents(atPath: try file(uri)), data.count == 16 else {
                            throw PackageExportError("\(rendition.folder)/\(uri): not a 16-byte AES-128 key")
                        }
                        keys[uri] = Array(data)
                    }
                    decryption = (keys[uri]!, key.iv)
                }
                do throws(PackageExportError) {
                    try copy(
                        file(segment.uri), range: segment.byteRange, decryption: decryption, readSize: readSize,
                        isCancelled: isCancelled,
                        read: { (count) in
                            report.bytesRead += Int64(count)
                            report.bytesWritten = written
                            reading(report)
                        }
                    ) { (chunk) throws(PackageExportError) in
                        try write(chunk, to: output, at: &written, name: temporary)
                    }
                } catch {
                    if error == .cancelled { throw error }
                    throw PackageExportError(
                        "segment \(segment.mediaSequence) (\(rendition.folder)/\(segment.uri)): \(error)")
                }
                report.segmentsDone = index + 1
                report.bytesWritten = written
                progress(report)
            }
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
        close(output)
        guard rename(temporary, destination.path) == 0 else {
            throw PackageExportError("\(SystemError.current("rename", subject: destination.path))")
        }
        return written
    }

    /// Reads `path` (or `range` of it) `readSize` bytes at a time, decrypting when asked; `read`
    /// hears of each read once its bytes went to `body`.
    private static func copy(
        _ path: String, range: ByteRange?, decryption: (key: [UInt8], iv: [UInt8])?, readSize: Int,
        isCancelled: () -> Bool = { false }, read: (Int) -> Void = { _ in },
        _ body: ([UInt8]) throws(PackageExportError) -> Void
    ) throws(PackageExportError) {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw PackageExportError("\(SystemError.current("open", subject: path))") }
        defer { close(input) }
        var decryptor: AES128CBC.Decryptor?
        if let decryption {
            do {
                decryptor = try AES128CBC.Decryptor(key: decryption.key, iv: decryption.iv)
            } catch {
                throw PackageExportError("\(path): \(error)")
            }
        }
        var offset = range?.lowerBound ?? 0
        let end = range?.upperBound ?? Int64.max
        var buffer = [UInt8](repeating: 0, count: readSize)
        while offset < end {
            if isCancelled() { throw .cancelled }
            let wanted = Int(min(Int64(buffer.count), end - offset))
            let count = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, wanted, off_t(offset)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PackageExportError("\(SystemError.current("read", subject: path))")
            }
            if count == 0 {
                if range != nil { throw PackageExportError("\(path) ends before its byte range \(range!)") }
                break
            }
            offset += Int64(count)
            let chunk = Array(buffer[0..<count])
            if var current = decryptor {
                let clear = current.update(chunk)
                decryptor = current
                if !clear.isEmpty { try body(clear) }
            } else {
                try body(chunk)
            }
            read(count)
        }
        if var current = decryptor {
            do {
                let last = try current.finalize()
                if !last.isEmpty { try body(last) }
            } catch {
                throw PackageExportError("\(path) does not decrypt: \(error)")
            }
        }
    }

    private static func write(
        _ bytes: [UInt8], to descriptor: Int32, at offset: inout Int64, name: String
    ) throws(PackageExportError) {
        let failure = bytes.withUnsafeBytes { buffer -> SystemError? in
            var done = 0
            while done < buffer.count {
                let result = systemWrite(descriptor, buffer.baseAddress! + done, buffer.count - done)
                if result < 0 {
                    if errno == EINTR { continue }
                    return SystemError.current("write", subject: name)
                }
                done += result
            }
            return nil
        }
        if let failure { throw PackageExportError("\(failure)") }
        offset += Int64(bytes.count)
    }
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
