import Foundation
import StreamKitCore

/// The random part of every task and package id of one manager directory (`id-salt`, 0600): with
/// it an id says nothing to whoever knows the URL, so that no page can predict the path of a
/// download under `/library/` from the URL it was downloaded from.
///
/// It lives in a file of its own, not in the queue database, so that a damaged database rebuilt
/// from the folders (``DownloadManager/repair(configuration:)``) finds the same ids again.
enum DownloadIDSalt {
    static let fileName = "id-salt"

    /// The salt of `directory`, made when missing or unreadable (a home of an older version: its
    /// tasks keep their ids, which the queue database holds).
    static func load(directory: URL) throws(DownloadManagerError) -> String {
        let path = directory.appendingPathComponent(fileName).path
        if let salt = read(path) { return salt }
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        // Made whole under a name of its own, then linked into place: link(2) never replaces a
        // file, so a process making the salt at the same moment (a `queue add` as `queue run`
        // starts on a new home) takes the first one's rather than naming the same task with
        // another id, whose credentials the other would then not find.
        let temporary = path + ".\(getpid()).\(UInt64.random(in: 0...UInt64.max)).new"
        defer { unlink(temporary) }
        do {
            try AtomicFile.write(Array((salt + "\n").utf8), to: temporary, temporarySuffix: ".tmp")
        } catch {
            throw DownloadManagerError(.fileSystem, "cannot write \(path): \(error)")
        }
        if link(temporary, path) == 0 { return salt }
        if errno == EEXIST, let made = read(path) { return made }
        // A damaged salt file (or a file system without links): replaced, as before.
        guard rename(temporary, path) == 0 else {
            throw DownloadManagerError(
                .fileSystem, "cannot write \(path): \(SystemError.current("rename", subject: path))")
        }
        return salt
    }

    /// The salt in the file at `path`, if it holds one.
    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            text.utf8.count == 32, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        PrivateFiles.restrictFile(path)
        return text
    }
}

extension DownloadManager {
    /// The id salt of the manager directory `directory` (made if missing): what
    /// ``DownloadRequest/taskID(salt:)`` and ``HLSDownloadJob/packageID(source:selection:decrypt:salt:)``
    /// take to name the tasks of that directory.
    ///
    /// - Throws: ``DownloadManagerError`` of kind `fileSystem` when it cannot be written.
    public static func idSalt(directory: URL) throws(DownloadManagerError) -> String {
        try DownloadIDSalt.load(directory: directory)
    }
}
