#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Folders and files only their owner can read: StreamKit's home, its library, cache and queue
/// (docs/CLI.md). Modes are set explicitly after creation, so the process's umask neither widens
/// nor narrows them.
public enum PrivateFiles {
    /// The mode of every folder StreamKit creates: `rwx------`.
    public static let directoryMode: mode_t = 0o700
    /// The mode of every file StreamKit creates: `rw-------`.
    public static let fileMode: mode_t = 0o600

    /// Creates the folder at `path` and every missing parent, each 0700; a folder already there is
    /// left as it is.
    ///
    /// - Throws: ``SystemError`` naming the call and the folder that could not be made.
    public static func createDirectory(_ path: String) throws(SystemError) {
        if isDirectory(path) { return }
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        if let slash = trimmed.lastIndex(of: "/"), slash != trimmed.startIndex {
            try createDirectory(String(trimmed[..<slash]))
        }
        if mkdir(trimmed, directoryMode) != 0 {
            // Another process may have made it meanwhile.
            if errno == EEXIST && isDirectory(trimmed) { return }
            throw SystemError.current("mkdir", subject: trimmed)
        }
        if chmod(trimmed, directoryMode) != 0 { throw SystemError.current("chmod", subject: trimmed) }
    }

    /// Makes the existing folder at `path` 0700 (a folder made by an older version, or by hand);
    /// nothing happens when there is none.
    public static func restrictDirectory(_ path: String) {
        if isDirectory(path) { chmod(path, directoryMode) }
    }

    /// Makes the existing file at `path` 0600; nothing happens when there is none.
    public static func restrictFile(_ path: String) {
        var status = stat()
        if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG { chmod(path, fileMode) }
    }

    /// Opens `path` with `flags` (`O_CREAT` is added) and makes it 0600, whether it was just made
    /// or was already there; returns the descriptor, or -1 with `errno` set.
    public static func open(_ path: String, _ flags: Int32) -> Int32 {
        let descriptor = systemOpen(path, flags | O_CREAT, fileMode)
        if descriptor >= 0 { fchmod(descriptor, fileMode) }
        return descriptor
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}

/// `open(2)`, named apart from ``PrivateFiles/open(_:_:)``.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
