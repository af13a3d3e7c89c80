import StreamKitCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Positional reads and writes of data files.
enum DataFile {
    /// Writes all of `bytes` at `offset`.
    static func write(_ bytes: ArraySlice<UInt8>, to descriptor: Int32, at offset: Int64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("pwrite", subject: "cache file at offset \(offset + Int64(done))")
            }
            done += result
        }
    }

    /// Frees the blocks of `range` (a hole; the file keeps its size). Best effort: a file system
    /// without holes keeps the bytes, which no span claims.
    static func punchHole(_ range: ByteRange, in descriptor: Int32) {
        // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
        _ = fallocate?(descriptor, 0x02 | 0x01, off_t(range.lowerBound), off_t(range.count))
    }

    /// Linux's `fallocate`, which Glibc's module leaves out without `_GNU_SOURCE`: looked up at
    /// run time (absent elsewhere).
    private static let fallocate: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32).self)
    }()

    /// Reads exactly `range` (fewer bytes only if the file ends first).
    static func read(_ range: ByteRange, from descriptor: Int32) throws(SystemError) -> [UInt8] {
        let count = Int(range.count)
        var failure: SystemError?
        // Uninitialized: every byte returned is one pread wrote.
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let result = pread(
                    descriptor, buffer.baseAddress! + done, count - done, off_t(range.lowerBound) + off_t(done))
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = SystemError.current(
                        "pread", subject: "cache file at offset \(range.lowerBound + Int64(done))")
                    break
                }
                if result == 0 { break }
                done += result
            }
            initialized = done
        }
        if let failure { throw failure }
        return bytes
    }
}
