#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file system a path is on and its room: what an error for a full disk names, so that the
/// user knows which disk to clear (the queue database and the downloads may be on different ones).
package struct FileSystemSpace: Hashable, Sendable, CustomStringConvertible {
    /// The directory the file system is mounted on.
    package var mountPoint: String
    /// Bytes an unprivileged writer may still use.
    package var availableBytes: Int64
    /// The file system's size.
    package var totalBytes: Int64

    /// Room as given.
    package init(mountPoint: String, availableBytes: Int64, totalBytes: Int64) {
        self.mountPoint = mountPoint
        self.availableBytes = availableBytes
        self.totalBytes = totalBytes
    }

    /// The file system holding `path`, or the nearest existing folder above it.
    ///
    /// - Returns: `nil` when nothing on the path can be examined.
    package static func of(_ path: String) -> FileSystemSpace? {
        guard let nearest = nearestExisting(path), let resolved = realpath(nearest, nil) else { return nil }
        let existing = String(cString: resolved)
        free(resolved)
        guard let device = device(of: existing) else { return nil }
        // The mount point: the highest folder above `existing` on the same device.
        var mountPoint = existing
        while mountPoint != "/" {
            let parent = parentPath(mountPoint)
            guard self.device(of: parent) == device else { break }
            mountPoint = parent
        }
        var info = statvfs()
        guard statvfs(existing, &info) == 0 else { return nil }
        let blockSize = Int64(info.f_frsize == 0 ? info.f_bsize : info.f_frsize)
        return FileSystemSpace(
            mountPoint: mountPoint, availableBytes: Int64(info.f_bavail) * blockSize,
            totalBytes: Int64(info.f_blocks) * blockSize)
    }

    /// `the file system at /mnt/media (0 B free of 20.0 MB)`.
    package var description: String {
        "the file system at \(mountPoint) (\(Self.format(availableBytes)) free of \(Self.format(totalBytes)))"
    }

    /// The sentence an error for a full disk at `path` ends with; empty when the file system
    /// cannot be examined.
    package static func describing(_ path: String) -> String {
        of(path).map { "; \($0)" } ?? ""
    }

    /// Bytes for people, in powers of 1024: `512 B`, `20.0 MB`.
    package static func format(_ bytes: Int64) -> String { ByteCountWords.tenths(bytes) }

    private static func device(of path: String) -> UInt64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return UInt64(status.st_dev)
    }

    private static func nearestExisting(_ path: String) -> String? {
        var current = path.isEmpty ? "." : path
        while device(of: current) == nil {
            guard current != "/" && current != "." else { return nil }
            current = parentPath(current)
        }
        return current
    }

    private static func parentPath(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
