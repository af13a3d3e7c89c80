import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock(2)` on `queue.lock` in a manager's directory, held while the manager lives.
///
/// `flock` locks belong to an open file description, so a second manager in the same process is
/// refused as surely as one in another process; the kernel drops the lock when the process dies,
/// so a crash never leaves the directory locked.
final class DirectoryLock: Sendable {
    let path: String
    private let descriptor: Mutex<Int32>

    init(directory: URL) throws(DownloadManagerError) {
        path = directory.appendingPathComponent("queue.lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw DownloadManagerError(.fileSystem, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            let holder = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : "?"
            if code == EWOULDBLOCK {
                throw DownloadManagerError(
                    .directoryLocked,
                    "another download manager (process \(holder.trimmingCharacters(in: .whitespacesAndNewlines))) uses \(directory.path)"
                )
            }
            throw DownloadManagerError(.fileSystem, "cannot lock \(path): \(String(cString: strerror(code)))")
        }
        _ = ftruncate(descriptor, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pwrite(descriptor, pid, pid.count, 0)
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Unlocks the directory (closing the lock file); later calls do nothing. Unlocking before
    /// closing matters: a child process forked by another thread holds a copy of the descriptor
    /// until it execs, and the lock belongs to the open file, not to our descriptor.
    func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 {
                flock(descriptor, LOCK_UN)
                close(descriptor)
            }
            descriptor = -1
        }
    }

    /// Whether some process holds the lock on `directory` now.
    static func isHeld(directory: URL) -> Bool {
        let path = directory.appendingPathComponent("queue.lock").path
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return false
        }
        return true
    }
}
