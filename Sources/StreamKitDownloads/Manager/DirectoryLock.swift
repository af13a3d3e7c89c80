import Foundation
import StreamKitCore

/// An exclusive `flock(2)` on `queue.lock` in a manager's directory, held while the manager lives.
///
/// `flock` locks belong to an open file description, so a second manager in the same process is
/// refused as surely as one in another process; the kernel drops the lock when the process dies,
/// so a crash never leaves the directory locked.
final class DirectoryLock: Sendable {
    let path: String
    private let lock: ExclusiveFileLock

    init(directory: URL) throws(DownloadManagerError) {
        path = directory.appendingPathComponent("queue.lock").path
        do {
            lock = try ExclusiveFileLock(path: path)
        } catch {
            switch error {
            case .held(let holder):
                throw DownloadManagerError(
                    .directoryLocked, "another download manager (process \(holder)) uses \(directory.path)")
            case .system(let failure):
                throw DownloadManagerError(.fileSystem, "cannot lock \(path): \(failure)")
            }
        }
    }

    /// Unlocks the directory (closing the lock file); later calls do nothing.
    func release() { lock.release() }

    /// Whether the lock file names a live process other than this one as its holder: a manager
    /// running elsewhere (a `queue run`), not a lock on its way out.
    static func namesAnotherLiveHolder(directory: URL) -> Bool {
        let path = directory.appendingPathComponent("queue.lock").path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0, pid != getpid()
        else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Whether some process holds the lock on `directory` now.
    static func isHeld(directory: URL) -> Bool {
        ExclusiveFileLock.isHeld(path: directory.appendingPathComponent("queue.lock").path)
    }
}
