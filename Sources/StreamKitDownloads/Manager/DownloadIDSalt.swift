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
        if let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            text.utf8.count == 32, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        {
            PrivateFiles.restrictFile(path)
            return text
        }
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        do {
            try AtomicFile.write(Array((salt + "\n").utf8), to: path, temporarySuffix: ".tmp")
        } catch {
            throw DownloadManagerError(.fileSystem, "cannot write \(path): \(error)")
        }
        return salt
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
