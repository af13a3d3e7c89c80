import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock(2)` on a file, held until ``release()`` (or until the lock goes away),
/// with the holder's pid written in the file for the message of whoever is refused.
///
/// `flock` locks belong to an open file description, so a second lock in the same process is
/// refused as surely as one in another process; the kernel drops the lock when the process dies,
/// so a crash never leaves it held.
public final class ExclusiveFileLock: Sendable {
    /// Why the lock was not taken.
    public enum Failure: Error, Sendable {
        /// Another holder has it; its pid as written in the file (`?` when unreadable).
        case held(by: String)
        /// The file could not be opened or locked.
        case system(SystemError)
    }

    /// The lock file.
    public let path: String
    private let descriptor = Atomic<Int32>(-1)

    /// Takes the lock on `path` (created if needed) without waiting.
    ///
    /// - Throws: ``Failure``.
    public init(path: String) throws(Failure) {
        self.path = path
        let opened = PrivateFiles.open(path, O_RDWR | O_CLOEXEC)
        guard opened >= 0 else { throw .system(SystemError.current("open", subject: path)) }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(opened, &buffer, buffer.count, 0)
            close(opened)
            guard code == EWOULDBLOCK else { throw .system(SystemError(code: code, operation: "flock", subject: path)) }
            let holder = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
            let trimmed = holder.filter { !$0.isWhitespace }
            throw .held(by: trimmed.isEmpty ? "?" : trimmed)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(opened, 0)
        _ = pwrite(opened, pid, pid.count, 0)
        descriptor.store(opened, ordering: .releasing)
    }

    /// Unlocks and closes; later calls do nothing. Unlocking first matters: a child process
    /// forked by another thread holds a copy of the descriptor until it execs, and closing ours
    /// alone would leave the lock (which belongs to the open file, not the descriptor) held until then.
    public func release() {
        let opened = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        guard opened >= 0 else { return }
        flock(opened, LOCK_UN)
        close(opened)
    }

    /// Whether some process holds the lock on `path` now.
    public static func isHeld(path: String) -> Bool {
        let opened = open(path, O_RDWR | O_CLOEXEC)
        guard opened >= 0 else { return false }
        defer { close(opened) }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else { return true }
        flock(opened, LOCK_UN)
        return false
    }

    deinit { release() }
}
