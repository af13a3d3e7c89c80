import Foundation
import StreamKitCore
import StreamKitHTTP

/// Request headers that carry credentials, kept out of the queue database: the index (and a file
/// task's record) stores such a header as `Name: <hidden>`, and the task's full header list lives
/// in `secrets/ID.json` of the manager directory (a 0600 file in a 0700 folder), read when the
/// task runs and deleted with the task. An HLS task's user keys (``HLSUserKeys``) are kept there
/// too, and nowhere else (TaskSecrets+Keys.swift).
///
/// A header is a credential when its name is `Authorization`, `Proxy-Authorization` or `Cookie`,
/// or contains `token`, `secret`, `key`, `auth` or `session` (any case).
enum TaskSecrets {
    /// The value shown and stored in place of a credential.
    static let hidden = "<hidden>"
    /// The folder of the secrets files, in the manager directory.
    static let folderName = "secrets"

    private static let names: Set<String> = ["authorization", "proxy-authorization", "cookie"]
    private static let nameParts = ["token", "secret", "key", "auth", "session"]

    /// Whether a header named `name` is a credential.
    static func isSecret(name: String) -> Bool {
        let lower = name.trimmingCharacters(in: .whitespaces).lowercased()
        return names.contains(lower) || nameParts.contains { lower.contains($0) }
    }

    /// `lines` (`Name: value`) with every credential's value replaced by ``hidden``.
    static func masked(_ lines: [String]) -> [String] {
        lines.map { line in
            guard let colon = line.firstIndex(of: ":"), isSecret(name: String(line[..<colon])) else { return line }
            return line[..<colon] + ": " + hidden
        }
    }

    /// Whether `lines` hold a credential's value (not yet hidden).
    static func holdsSecrets(_ lines: [String]) -> Bool { masked(lines) != lines }

    /// The secrets file of task `id`.
    static func path(directory: URL, id: String) -> String {
        directory.appendingPathComponent(folderName).appendingPathComponent(id + ".json").path
    }

    /// Writes the full header list of task `id` and its user keys, replacing any earlier ones.
    static func write(
        _ lines: [String], keys: HLSUserKeys = HLSUserKeys(), directory: URL, id: String
    ) throws(DownloadManagerError) {
        let folder = directory.appendingPathComponent(folderName).path
        let file = path(directory: directory, id: id)
        do {
            try PrivateFiles.createDirectory(folder)
            PrivateFiles.restrictDirectory(folder)
            let data = encoded(lines, keys: keys)
            try AtomicFile.write(data, to: file, temporarySuffix: ".tmp")
        } catch {
            throw DownloadManagerError(
                .fileSystem, "cannot write the task's credentials to \(file): \(error)", taskID: id)
        }
    }

    /// The full header list of task `id`, or `nil` when it has no secrets file.
    static func read(directory: URL, id: String) -> [String]? {
        guard let data = FileManager.default.contents(atPath: path(directory: directory, id: id)) else { return nil }
        return decoded(data)?.headers
    }

    /// Deletes the secrets file of task `id`, if any.
    static func remove(directory: URL, id: String) {
        unlink(path(directory: directory, id: id))
    }

    /// The headers to send for a task whose index row holds `stored`: the secrets file's list, or
    /// `stored` when it needs none.
    ///
    /// - Throws: `fileSystem` when `stored` hides a credential and its secrets file is gone.
    static func requestLines(stored: [String], directory: URL, id: String) throws(DownloadManagerError) -> [String] {
        if let lines = read(directory: directory, id: id) { return lines }
        let hiding = stored.contains { $0.hasSuffix(": " + hidden) && isSecret(name: String($0.prefix { $0 != ":" })) }
        guard !hiding else {
            throw DownloadManagerError(
                .fileSystem,
                "the task's credentials (\(path(directory: directory, id: id))) are missing; remove the task "
                    + "and add it again with its --header", taskID: id)
        }
        return stored
    }

    /// `lines` as headers to send.
    static func headers(_ lines: [String]) -> HTTPHeaders {
        var result = HTTPHeaders()
        for line in lines {
            if let colon = line.firstIndex(of: ":") {
                result.add(
                    String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
        }
        return result
    }
}

extension TaskSecrets {
    /// `command` as it may be posted through the index (``DownloadQueueRemote``): a new task's
    /// credentials go to its secrets file first, and the request carries them hidden, so that no
    /// request row ever holds them. Returns the id whose secrets file was written, to delete when
    /// the add is refused.
    static func beforePosting(
        _ command: DownloadQueueCommand, directory: URL
    ) throws(DownloadManagerError) -> (DownloadQueueCommand, String?) {
        guard case .add(var request, let autoStart) = command else { return (command, nil) }
        let lines = request.headers.map { "\($0.name): \($0.value)" }
        let keys = request.userKeys
        guard holdsSecrets(lines) || !keys.isEmpty else { return (command, nil) }
        request.headers = headers(masked(lines))
        request.userKeys = HLSUserKeys()
        let id = request.taskID(salt: try DownloadIDSalt.load(directory: directory))
        // A task with this id keeps its own credentials; the manager refuses the duplicate.
        let queued = (try? DownloadQueueRemote.tasks(directory: directory).contains { $0.id == id }) ?? false
        guard !queued else { return (.add(request, autoStart: autoStart), nil) }
        try write(lines, keys: keys, directory: directory, id: id)
        return (.add(request, autoStart: autoStart), id)
    }
}
