import StreamKitCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A byte range of an open file, sent as a response body with `sendfile`.
///
/// Owns its descriptor and closes it when the last reference goes, whether the response was
/// sent, cut short by the client, or dropped because the connection closed first.
public final class HTTPFileRegion: Sendable {
    /// The open file.
    public let fileDescriptor: Int32
    /// The bytes to send.
    public let range: ByteRange
    /// Called once the descriptor is closed.
    private let onClose: (@Sendable () -> Void)?

    /// Takes ownership of an open descriptor.
    ///
    /// - Parameters:
    ///   - fileDescriptor: The open file, closed when the region goes.
    ///   - range: The bytes to send.
    ///   - onClose: Called once the descriptor is closed (to let go of what the file belongs to).
    public init(takingOwnershipOf fileDescriptor: Int32, range: ByteRange, onClose: (@Sendable () -> Void)? = nil) {
        self.fileDescriptor = fileDescriptor
        self.range = range
        self.onClose = onClose
    }

    /// Opens the regular file at `path` for reading.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - range: The bytes to send; the whole file when `nil` (clipped to the file's length).
    /// - Throws: ``SystemError`` when the file cannot be opened or is not a regular file.
    public convenience init(path: String, range: ByteRange? = nil) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw SystemError.current("open", subject: path) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = SystemError.current("fstat", subject: path)
            close(descriptor)
            throw error
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw SystemError(code: EISDIR, operation: "open", subject: path)
        }
        let whole = ByteRange(0, Int64(status.st_size))
        let selected = range.map { whole.intersection($0) ?? ByteRange(0, 0) } ?? whole
        self.init(takingOwnershipOf: descriptor, range: selected)
    }

    deinit {
        close(fileDescriptor)
        onClose?()
    }
}
