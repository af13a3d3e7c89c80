import Foundation
import StreamKitCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Start-up repair: what a data file really holds of what the index claims.
extension CacheStore {
    /// The part of `claimed` the file at `path` really holds: not past its end, not in a hole.
    static func bytesPresent(claimed: ByteRangeSet, path: String?) -> ByteRangeSet {
        guard !claimed.isEmpty else { return claimed }
        guard let path else { return ByteRangeSet() }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return ByteRangeSet() }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return ByteRangeSet() }
        let size = Int64(status.st_size)
        var present = claimed
        present.remove(ByteRange(min(size, Int64.max - 1), Int64.max))
        // Holes: claimed bytes the file system has no data for (never written).
        for span in present.ranges {
            var offset = span.lowerBound
            while offset < span.upperBound {
                let hole = Int64(lseek(descriptor, off_t(offset), seekHole))
                guard hole >= 0, hole < span.upperBound else { break }
                let data = Int64(lseek(descriptor, off_t(hole), seekData))
                let holeEnd = data < 0 ? span.upperBound : min(data, span.upperBound)
                present.remove(ByteRange(hole, holeEnd))
                offset = holeEnd
            }
        }
        return present
    }
}

#if canImport(Darwin)
private let seekHole: Int32 = 3
private let seekData: Int32 = 4
#else
/// `SEEK_HOLE` and `SEEK_DATA` (Linux values; Glibc's module leaves them out without `_GNU_SOURCE`).
private let seekData: Int32 = 3
private let seekHole: Int32 = 4
#endif
