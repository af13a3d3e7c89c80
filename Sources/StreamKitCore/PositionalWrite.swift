#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole writes at a file offset (`pwrite`), as the downloaders place ranges into their files.
public enum PositionalWrite {
    /// A whole write that stopped: the `pwrite` error and the offset of the first byte not written.
    public struct Failure: Error, Sendable {
        public let error: SystemError
        public let byteOffset: Int64
    }

    /// Writes all of `buffer` at `offset`, retrying short writes and interruptions.
    ///
    /// - Parameter subject: What the error names as written to.
    public static func write(
        _ buffer: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64, subject: String? = nil
    ) throws(Failure) {
        var done = 0
        while done < buffer.count {
            let result = pwrite(
                descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if result < 0 {
                if errno == EINTR { continue }
                throw Failure(
                    error: SystemError.current("pwrite", subject: subject), byteOffset: offset + Int64(done))
            }
            done += result
        }
    }
}
