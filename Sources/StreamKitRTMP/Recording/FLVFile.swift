import StreamKitAMF
import StreamKitCore
import StreamKitFLV

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes an FLV file tag by tag through a buffer, and at the end patches what could not be
/// known at the start: the header's audio/video flags and `onMetaData`'s duration and file size.
///
/// Owned by one task; the file is valid FLV after every tag that reaches the disk.
public final class FLVFileWriter {
    /// The file's path (it changes when ``move(to:replacing:)`` renames the file).
    public private(set) var path: String
    /// Bytes in the file, counting those still buffered.
    public private(set) var size: Int64 = 0
    private var descriptor: Int32
    private var buffer = ByteBuffer(capacity: 1 << 20)
    private var flushedSize: Int64 = 0
    private var durationOffset: Int64?
    private var fileSizeOffset: Int64?
    private var sawAudio = false
    private var sawVideo = false

    /// Creates (or truncates) the file at `path` and writes the FLV header.
    ///
    /// - Parameter exclusive: Hold an exclusive `flock` on the file while writing, and truncate it
    ///   only once the lock is held: a file another writer holds is refused (`EBUSY`), one left by
    ///   a writer that died is taken over (the kernel dropped its lock).
    /// - Throws: ``SystemError`` when the file cannot be created or another writer holds it.
    public init(path: String, header: FLVHeader = FLVHeader(), exclusive: Bool = false) throws(SystemError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | (exclusive ? 0 : O_TRUNC) | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .current("open", subject: path) }
        if exclusive {
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                close(descriptor)
                descriptor = -1
                throw SystemError(
                    code: code == EWOULDBLOCK ? EBUSY : code, operation: "lock (another recording writes it)",
                    subject: path)
            }
            guard ftruncate(descriptor, 0) == 0 else {
                let error = SystemError.current("ftruncate", subject: path)
                close(descriptor)
                descriptor = -1
                throw error
            }
        }
        header.write(into: &buffer)
        buffer.writeInteger(UInt32(0))  // PreviousTagSize0
        size = Int64(buffer.readableBytes)
    }

    /// Opens the file an earlier recording left at `path` to append to it (a recording resumed by
    /// a new process): a tag torn by the end of that recording is cut off, and ``finish(duration:)``
    /// patches the metadata the file started with. Locked as `exclusive` does in ``init(path:header:exclusive:)``.
    ///
    /// - Returns: `nil` when there is no file at `path`, or it is not FLV, or it holds no media
    ///   (the caller starts a new file then).
    /// - Throws: ``SystemError`` when the file cannot be opened, locked or cut.
    public init?(continuing path: String) throws(SystemError) {
        guard let (opened, scan, lastTimestamp) = try Self.openForAppending(path) else { return nil }
        self.path = path
        descriptor = opened
        size = scan.validEnd
        flushedSize = scan.validEnd
        durationOffset = scan.durationOffset
        fileSizeOffset = scan.fileSizeOffset
        sawAudio = scan.sawAudio
        sawVideo = scan.sawVideo
        continuation = Continuation(lastTimestamp: lastTimestamp, mediaEnd: lastTimestamp + scan.frameInterval)
    }

    /// Opens, locks, scans and cuts the file for ``init(continuing:)``; the descriptor is closed
    /// again on every way out but success.
    private static func openForAppending(_ path: String) throws(SystemError) -> (Int32, FLVFileScan, Int64)? {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .current("open", subject: path)
        }
        var handedOver = false
        defer { if !handedOver { close(descriptor) } }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            throw SystemError(
                code: code == EWOULDBLOCK ? EBUSY : code, operation: "lock (another recording writes it)", subject: path
            )
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .current("fstat", subject: path) }
        guard let scan = FLVFileScan(descriptor: descriptor, size: Int64(info.st_size)),
            let lastTimestamp = scan.lastTimestamp
        else { return nil }
        guard ftruncate(descriptor, off_t(scan.validEnd)) == 0 else { throw .current("ftruncate", subject: path) }
        guard lseek(descriptor, off_t(scan.validEnd), SEEK_SET) >= 0 else { throw .current("lseek", subject: path) }
        handedOver = true
        return (descriptor, scan, lastTimestamp)
    }

    /// Where the media of a file opened with ``init(continuing:)`` ends, in milliseconds.
    public struct Continuation: Hashable, Sendable {
        /// The latest audio or video timestamp.
        public var lastTimestamp: Int64
        /// The latest timestamp plus one frame interval: where the next media may start.
        public var mediaEnd: Int64
    }

    /// For a file opened with ``init(continuing:)``, where its media ends; `nil` for a new file.
    public private(set) var continuation: Continuation?

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Appends `tag`.
    ///
    /// - Throws: ``SystemError`` when the buffer cannot be written out.
    public func write(_ tag: FLVTag) throws(SystemError) {
        if tag.type == .audio { sawAudio = true }
        if tag.type == .video { sawVideo = true }
        size += Int64(tag.size + 4)
        guard tag.data.count >= Self.directWriteSize else {
            tag.write(into: &buffer)
            if buffer.readableBytes >= 1 << 20 { try flush() }
            return
        }
        // A large tag goes out from where it is, beside the buffered bytes, without a copy.
        FLVTag.writeHeader(type: tag.type, dataSize: tag.data.count, timestamp: tag.timestamp, into: &buffer)
        try writeAll(buffer.readableBytesView, tag.data[...])
        flushedSize += Int64(buffer.readableBytes + tag.data.count)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        buffer.discardReadBytes()
        buffer.writeInteger(UInt32(tag.size))
    }

    /// Tags with at least this much data are written without copying it into the buffer.
    static let directWriteSize = 32 << 10

    /// Appends `onMetaData` with `duration` and `filesize` set to zero, remembering where they are
    /// so that ``finish(duration:)`` can fill them in.
    public func writeMetadata(_ properties: AMF0Object, timestamp: UInt32 = 0) throws(SystemError) {
        var properties = properties
        properties["duration"] = .number(0)
        properties["filesize"] = .number(0)
        let data = FLVScriptData.metadata(properties).data
        let dataStart = size + Int64(FLVTag.headerSize)
        durationOffset = Self.numberOffset(of: "duration", in: data).map { dataStart + Int64($0) }
        fileSizeOffset = Self.numberOffset(of: "filesize", in: data).map { dataStart + Int64($0) }
        try write(FLVTag(type: .scriptData, timestamp: timestamp, data: data))
    }

    /// Writes out the buffered bytes.
    public func flush() throws(SystemError) {
        try writeAll(buffer.readableBytesView)
        flushedSize += Int64(buffer.readableBytes)
        // Keep the storage (nothing else refers to it now): new memory for every megabyte would
        // cost a page fault per page.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        buffer.discardReadBytes()
    }

    private func writeAll(_ bytes: ArraySlice<UInt8>) throws(SystemError) {
        try writeAll(bytes, [][...])
    }

    /// Writes `first` then `second` with `writev`, however many calls it takes.
    private func writeAll(_ first: ArraySlice<UInt8>, _ second: ArraySlice<UInt8>) throws(SystemError) {
        var first = first
        var second = second
        while !first.isEmpty || !second.isEmpty {
            let written = first.withUnsafeBytes { head in
                second.withUnsafeBytes { tail in
                    var vectors = [
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress), iov_len: head.count),
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: tail.baseAddress), iov_len: tail.count),
                    ]
                    return writev(descriptor, &vectors, 2)
                }
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .current("writev", subject: path)
            }
            let fromFirst = min(written, first.count)
            first = first.dropFirst(fromFirst)
            second = second.dropFirst(written - fromFirst)
        }
    }

    /// Writes out everything, patches the header flags and the metadata's duration and file
    /// size, and closes the file.
    ///
    /// - Parameter duration: The recording's length in seconds.
    public func finish(duration: Double) throws(SystemError) {
        try flush()
        var flags = ByteBuffer()
        flags.writeInteger(UInt8((sawAudio ? 0x04 : 0) | (sawVideo ? 0x01 : 0)))
        try patch(flags, at: 4)
        if let durationOffset {
            var number = ByteBuffer()
            number.writeInteger(duration.bitPattern)
            try patch(number, at: durationOffset)
        }
        if let fileSizeOffset {
            var number = ByteBuffer()
            number.writeInteger(Double(size).bitPattern)
            try patch(number, at: fileSizeOffset)
        }
        guard close(descriptor) == 0 else {
            descriptor = -1
            throw .current("close", subject: path)
        }
        descriptor = -1
    }

    /// Renames the file to `destination` while it stays open for writing.
    ///
    /// - Parameter replacing: Whether a file at `destination` is replaced; when false, one that
    ///   is there fails with `EEXIST` and nothing changes.
    /// - Throws: ``SystemError`` when the file cannot be renamed.
    public func move(to destination: String, replacing: Bool) throws(SystemError) {
        if replacing {
            guard rename(path, destination) == 0 else { throw .current("rename", subject: destination) }
        } else {
            // link() never replaces what is there, which rename() would. A file system without
            // hard links gets a check, then rename().
            if link(path, destination) == 0 {
                unlink(path)
            } else {
                let error = SystemError.current("link", subject: destination)
                guard error.code != EEXIST, access(destination, F_OK) != 0, rename(path, destination) == 0 else {
                    throw error.code == EEXIST ? error : .current("rename", subject: destination)
                }
            }
        }
        path = destination
    }

    /// Closes the file and deletes it.
    public func discard() {
        // Unlinked while still held: no other writer can have claimed this file in between.
        unlink(path)
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    private func patch(_ bytes: ByteBuffer, at offset: Int64) throws(SystemError) {
        let written = bytes.readableBytesView.withUnsafeBytes {
            pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset))
        }
        guard written == bytes.readableBytes else { throw .current("pwrite", subject: path) }
    }

    /// Where the 8-byte number of property `name` starts in AMF0 `data`: after the name's
    /// 16-bit length, its UTF-8, and the number marker.
    static func numberOffset(of name: String, in data: [UInt8]) -> Int? {
        let pattern = [UInt8(0), UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(0x00)]
        guard data.count >= pattern.count else { return nil }
        for start in 0...(data.count - pattern.count) where data[start..<(start + pattern.count)].elementsEqual(pattern)
        {
            return start + pattern.count
        }
        return nil
    }
}

/// Reads an FLV file tag by tag, in large reads, with memory that does not grow with the file.
public final class FLVFileReader {
    /// The file's path.
    public let path: String
    /// The file header, once read.
    public private(set) var header: FLVHeader?
    /// The file's size in bytes.
    public let fileSize: Int64
    private var descriptor: Int32
    private var reader = FLVReader()
    private var buffer = ByteBuffer()
    private var atEnd = false
    private let readSize = 1 << 20

    /// Opens `path`.
    ///
    /// - Throws: ``SystemError`` when it cannot be opened.
    public init(path: String) throws(SystemError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .current("open", subject: path) }
        var info = stat()
        fileSize = fstat(descriptor, &info) == 0 ? Int64(info.st_size) : 0
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The next tag, or `nil` at the end of the file.
    ///
    /// - Throws: ``FLVError`` when the file is not FLV or ends inside a tag; ``SystemError`` when reading fails.
    public func next() throws -> FLVTag? {
        while true {
            if let item = try reader.read(from: &buffer) {
                switch item {
                case .header(let header): self.header = header
                case .tag(let tag): return tag
                }
                continue
            }
            if atEnd {
                if buffer.readableBytes == 0 && reader.isAtTagBoundary { return nil }
                if header == nil { throw FLVError.notFLV() }
                throw FLVError.truncated(offset: reader.offset)
            }
            try fill()
        }
    }

    private func fill() throws {
        if buffer.readerIndex > 0 { buffer.discardReadBytes() }
        let chunk = try [UInt8](unsafeUninitializedCapacity: readSize) { bytes, count in
            while true {
                let result = read(descriptor, bytes.baseAddress, readSize)
                if result < 0 && errno == EINTR { continue }
                guard result >= 0 else { throw SystemError.current("read", subject: path) }
                count = result
                return
            }
        }
        if chunk.isEmpty { atEnd = true } else { buffer.writeBytes(chunk) }
    }
}

private func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
