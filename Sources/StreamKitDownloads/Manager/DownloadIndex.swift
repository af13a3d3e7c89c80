import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// Where a progressive file stands: its length and validator once known, and which bytes are on
/// disk. Saved in the index so that a restart resumes exactly.
public struct FileResumeState: Hashable, Sendable {
    /// The representation's length, once a response announced it.
    public var length: Int64?
    /// The validator sent in `If-Range` (strong ETag or Last-Modified).
    public var validator: HTTPClientRequest.IfRange?
    /// Bytes written to the partial file (and flushed before being saved).
    public var done: ByteRangeSet

    /// Creates a state.
    public init(length: Int64? = nil, validator: HTTPClientRequest.IfRange? = nil, done: ByteRangeSet = ByteRangeSet())
    {
        self.length = length
        self.validator = validator
        self.done = done
    }
}

/// The SQLite index of a ``DownloadManager`` (`queue.sqlite`, WAL): one row per task, the
/// progressive files' range sets, the settings, and requests from other processes. Owned by the
/// manager actor; every multi-row change runs in a transaction.
///
/// `@unchecked Sendable` only so that it can be opened on a Dispatch queue and handed to the
/// actor that then owns it alone; it is never used from two places at once.
final class DownloadIndex: @unchecked Sendable {
    let database: SQLiteDatabase
    /// The database file, for messages.
    let path: String

    /// Opens the index at `path`; `createSchema: false` only reads an index a manager made (no
    /// write, so no wait for the manager's lock).
    init(path: String, createSchema: Bool = true) throws(DownloadManagerError) {
        self.path = path
        if let reason = Self.emptyWhileDownloadsExist(path) { throw Self.damaged(path, reason) }
        do {
            // A reader leaves the journal mode to the manager: switching a file being created to
            // WAL takes a lock the manager may hold for longer than a reader waits.
            database = try SQLiteDatabase(
                path: path, busyTimeoutMilliseconds: createSchema ? 5_000 : 1_000, setsWriteAheadLog: createSchema)
            // A reader (queue list) meets damage in the pages it reads, mapped in `run`; it does
            // not read every page, which would hold it up behind a manager creating the file.
            guard createSchema else { return }
            // Deleted and rewritten rows (a request that carried a credential, a row an older
            // version stored with one) are zeroed rather than left in free space.
            try database.execute("PRAGMA secure_delete = ON")
            // A page damaged on disk shows only when read: check every page's structure now (a
            // few milliseconds for a queue), so that the user hears it at open, with the way out.
            let check = try database.query("PRAGMA quick_check").compactMap { $0.text("quick_check") }
            if check != ["ok"] {
                throw Self.damaged(path, check.prefix(3).joined(separator: "; "))
            }
            try database.execute(
                """
                CREATE TABLE IF NOT EXISTS tasks(
                    queue_id INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    url TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    selection TEXT,
                    decrypt INTEGER NOT NULL DEFAULT 0,
                    file_type TEXT NOT NULL,
                    title TEXT NOT NULL,
                    thumbnail TEXT,
                    state TEXT NOT NULL,
                    progress REAL NOT NULL DEFAULT 0,
                    bytes_done INTEGER NOT NULL DEFAULT 0,
                    bytes_expected INTEGER,
                    post_progress REAL NOT NULL DEFAULT 0,
                    speed REAL NOT NULL DEFAULT 0,
                    last_error TEXT,
                    created_at REAL NOT NULL,
                    finished_at REAL,
                    location TEXT NOT NULL,
                    connections INTEGER NOT NULL,
                    headers TEXT NOT NULL DEFAULT '[]',
                    file_length INTEGER,
                    file_validator TEXT,
                    file_ranges TEXT NOT NULL DEFAULT '[]',
                    export_path TEXT,
                    recording TEXT,
                    recorded_seconds REAL,
                    subtitle_format TEXT,
                    keep_encrypted INTEGER NOT NULL DEFAULT 0
                );
                -- What serve's page reads at every request: the unfinished tasks in queue order (only
                -- they are walked, not the succeeded thousands around them) and the count in each
                -- state (from the small index, not the rows).
                CREATE INDEX IF NOT EXISTS tasks_unfinished ON tasks(queue_id) WHERE state != 'success';
                CREATE INDEX IF NOT EXISTS tasks_state ON tasks(state);
                CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS requests(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    action TEXT NOT NULL,
                    argument TEXT NOT NULL,
                    answer TEXT,
                    done INTEGER NOT NULL DEFAULT 0
                );
                """)
            // Queues made before the export step, recordings, merged subtitles or DASH lack their
            // columns.
            let columns = try database.query("PRAGMA table_info(tasks)").compactMap { $0.text("name") }
            let added = [
                ("export_path", "TEXT"), ("recording", "TEXT"), ("recorded_seconds", "REAL"),
                ("subtitle_format", "TEXT"), ("keep_encrypted", "INTEGER NOT NULL DEFAULT 0"),
            ]
            for (name, type) in added where !columns.contains(name) {
                try database.execute("ALTER TABLE tasks ADD COLUMN \(name) \(type)")
            }
        } catch let error as DownloadManagerError {
            throw error
        } catch let error as SQLiteError where Self.damageCodes.contains(error.resultCode) {
            throw Self.damaged(path, error.message)
        } catch {
            throw DownloadManagerError(.database, "\(error)")
        }
    }

    /// SQLite's codes for a file that is not a database or is damaged (`SQLITE_CORRUPT`,
    /// `SQLITE_NOTADB`).
    static let damageCodes: Set<Int32> = [11, 26]

    /// The error for a damaged index, with the way out.
    static func damaged(_ path: String, _ reason: String) -> DownloadManagerError {
        DownloadManagerError(
            .damagedIndex,
            "the queue database \(path) is damaged (\(reason)); `streamkit queue repair` sets it aside and "
                + "rebuilds the queue from the downloads on disk")
    }

    /// Why an index file reads as empty when it should not: a file of 0 bytes (with no write-ahead
    /// log holding its pages) beside a library that holds downloads. SQLite would take it for a new
    /// queue, and every download would drop out of it.
    static func emptyWhileDownloadsExist(_ path: String) -> String? {
        let files = FileManager.default
        guard let size = (try? files.attributesOfItem(atPath: path))?[.size] as? NSNumber, size.int64Value == 0
        else { return nil }
        if let wal = (try? files.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber, wal.int64Value > 0 {
            return nil
        }
        let library = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("library").path
        let downloads = ((try? files.contentsOfDirectory(atPath: library)) ?? []).filter { !$0.hasPrefix(".") }
        guard !downloads.isEmpty else { return nil }
        return "the file is empty, yet library/ holds \(downloads.count) download\(downloads.count == 1 ? "" : "s")"
    }

    // MARK: Tasks

    func tasks() throws(DownloadManagerError) -> [DownloadTaskInfo] {
        try run { try database.query("SELECT * FROM tasks ORDER BY queue_id").map(Self.info) }
    }

    /// At most `limit` tasks after the first `offset`, in queue order, or with `unfinishedFirst`
    /// the tasks not yet succeeded in queue order and then the succeeded ones, newest first. Only
    /// these rows are read: a page of a queue of ten thousand costs what a page of a small one does.
    func tasks(offset: Int, limit: Int, unfinishedFirst: Bool) throws(DownloadManagerError) -> [DownloadTaskInfo] {
        let (offset, limit) = (Int64(max(offset, 0)), Int64(max(limit, 0)))
        guard unfinishedFirst else {
            return try run {
                try database.query(
                    "SELECT * FROM tasks ORDER BY queue_id LIMIT ? OFFSET ?", [.integer(limit), .integer(offset)]
                )
                .map(Self.info)
            }
        }
        // Two walks of the queue's order, each stopping after its rows: one sort of every task by
        // state and position took 13 ms at ten thousand tasks.
        return try run {
            let unfinishedCount =
                try database.query("SELECT COUNT(*) AS count FROM tasks WHERE state != 'success'").first?.integer(
                    "count") ?? 0
            var rows: [SQLiteRow] = []
            if offset < unfinishedCount {
                rows = try database.query(
                    "SELECT * FROM tasks WHERE state != 'success' ORDER BY queue_id LIMIT ? OFFSET ?",
                    [.integer(limit), .integer(offset)])
            }
            if Int64(rows.count) < limit {
                rows += try database.query(
                    "SELECT * FROM tasks WHERE state = 'success' ORDER BY queue_id DESC LIMIT ? OFFSET ?",
                    [.integer(limit - Int64(rows.count)), .integer(max(0, offset - unfinishedCount))])
            }
            return try rows.map(Self.info)
        }
    }

    /// How many tasks are in each state.
    func stateCounts() throws(DownloadManagerError) -> [DownloadState: Int] {
        try run {
            var counts: [DownloadState: Int] = [:]
            for row in try database.query("SELECT state, COUNT(*) AS count FROM tasks GROUP BY state") {
                let state = DownloadState(rawValue: row.text("state") ?? "") ?? .failed
                counts[state, default: 0] += Int(row.integer("count") ?? 0)
            }
            return counts
        }
    }

    func task(_ id: String) throws(DownloadManagerError) -> DownloadTaskInfo? {
        try run { try database.query("SELECT * FROM tasks WHERE id = ?", [.text(id)]).first.map(Self.info) }
    }

    func insert(_ info: DownloadTaskInfo) throws(DownloadManagerError) -> Int64 {
        try run {
            let selection = try info.selection.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
            let headers = String(decoding: try JSONEncoder().encode(info.headers), as: UTF8.self)
            let recording = try info.recording.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
            try database.query(
                """
                INSERT INTO tasks(id, url, kind, selection, decrypt, file_type, title, thumbnail, state, created_at,
                    location, connections, headers, export_path, recording, recorded_seconds, subtitle_format,
                    keep_encrypted)
                VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(info.id), .text(info.url), .text(info.kind.rawValue),
                    selection.map(SQLiteValue.text) ?? .null,
                    .integer(info.decrypt ? 1 : 0), .text(info.fileType.rawValue), .text(info.title),
                    info.thumbnailURL.map(SQLiteValue.text) ?? .null, .text(info.state.rawValue),
                    .real(info.createdAt.timeIntervalSince1970), .text(info.location),
                    .integer(Int64(info.connections)),
                    .text(headers), info.exportPath.map(SQLiteValue.text) ?? .null,
                    recording.map(SQLiteValue.text) ?? .null, info.recordedSeconds.map(SQLiteValue.real) ?? .null,
                    info.subtitleFormat.map { SQLiteValue.text($0.rawValue) } ?? .null,
                    .integer(info.keepEncrypted ? 1 : 0),
                ])
            return database.lastInsertRowID
        }
    }

    /// Saves the changing fields of `info`: state, progress, bytes, seconds recorded, error, finish time.
    func update(_ info: DownloadTaskInfo) throws(DownloadManagerError) {
        try run {
            try database.query(
                """
                UPDATE tasks SET state = ?, progress = ?, bytes_done = ?, bytes_expected = ?, post_progress = ?,
                    speed = ?, last_error = ?, finished_at = ?, recorded_seconds = ? WHERE id = ?
                """,
                [
                    .text(info.state.rawValue), .real(info.progress), .integer(info.bytesDone),
                    info.bytesExpected.map(SQLiteValue.integer) ?? .null, .real(info.postProcessingProgress),
                    .real(info.bytesPerSecond), info.lastError.map(SQLiteValue.text) ?? .null,
                    info.finishedAt.map { .real($0.timeIntervalSince1970) } ?? .null,
                    info.recordedSeconds.map(SQLiteValue.real) ?? .null, .text(info.id),
                ])
        }
    }

    /// Replaces the title of task `id`.
    func setTitle(_ title: String, id: String) throws(DownloadManagerError) {
        try run { try database.query("UPDATE tasks SET title = ? WHERE id = ?", [.text(title), .text(id)]) }
    }

    /// Replaces the header lines of task `id` (credentials moving to its secrets file).
    func setHeaders(_ headers: [String], id: String) throws(DownloadManagerError) {
        try run {
            let text = String(decoding: try JSONEncoder().encode(headers), as: UTF8.self)
            try database.query("UPDATE tasks SET headers = ? WHERE id = ?", [.text(text), .text(id)])
        }
    }

    func delete(_ id: String) throws(DownloadManagerError) {
        try run { try database.query("DELETE FROM tasks WHERE id = ?", [.text(id)]) }
    }

    // MARK: Progressive files

    func fileState(_ id: String) throws(DownloadManagerError) -> FileResumeState {
        try run {
            guard
                let row = try database.query(
                    "SELECT file_length, file_validator, file_ranges FROM tasks WHERE id = ?", [.text(id)]
                ).first
            else { return FileResumeState() }
            let ranges = try JSONDecoder().decode(ByteRangeSet.self, from: Data((row.text("file_ranges") ?? "[]").utf8))
            return FileResumeState(
                length: row.integer("file_length"), validator: row.text("file_validator").flatMap(Self.validator),
                done: ranges)
        }
    }

    /// Saves a file's state together with the task's progress, in one transaction.
    func saveFileState(_ state: FileResumeState, for info: DownloadTaskInfo) throws(DownloadManagerError) {
        try run {
            let ranges = String(decoding: try JSONEncoder().encode(state.done), as: UTF8.self)
            try database.transaction {
                try database.query(
                    "UPDATE tasks SET file_length = ?, file_validator = ?, file_ranges = ? WHERE id = ?",
                    [
                        state.length.map(SQLiteValue.integer) ?? .null,
                        state.validator.map { .text(Self.validatorText($0)) } ?? .null, .text(ranges), .text(info.id),
                    ])
                try update(info)
            }
        }
    }

    static func validatorText(_ validator: HTTPClientRequest.IfRange) -> String {
        switch validator {
        case .entityTag(let tag): "etag " + tag.headerValue
        case .lastModified(let date): "date " + HTTPDate.format(date)
        }
    }

    static func validator(_ text: String) -> HTTPClientRequest.IfRange? {
        if text.hasPrefix("etag ") { return EntityTag(headerValue: String(text.dropFirst(5))).map { .entityTag($0) } }
        if text.hasPrefix("date ") { return HTTPDate.parse(String(text.dropFirst(5))).map { .lastModified($0) } }
        return nil
    }

    // MARK: Settings

    func setting(_ key: String) throws(DownloadManagerError) -> String? {
        try run { try database.query("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.text("value") }
    }

    func setSetting(_ key: String, _ value: String?) throws(DownloadManagerError) {
        try run {
            if let value {
                try database.query(
                    "INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [.text(key), .text(value)])
            } else {
                try database.query("DELETE FROM settings WHERE key = ?", [.text(key)])
            }
        }
    }

    // MARK: Requests from other processes

    func pendingRequests() throws(DownloadManagerError) -> [(seq: Int64, action: String, argument: String)] {
        try run {
            try database.query("SELECT seq, action, argument FROM requests WHERE done = 0 ORDER BY seq").map {
                ($0.integer("seq") ?? 0, $0.text("action") ?? "", $0.text("argument") ?? "")
            }
        }
    }

    /// Answers request `seq`, dropping its argument (an added task's headers may hold credentials).
    func answer(_ seq: Int64, _ answer: String) throws(DownloadManagerError) {
        try run {
            try database.query(
                "UPDATE requests SET done = 1, answer = ?, argument = '' WHERE seq = ?", [.text(answer), .integer(seq)])
        }
    }

    // MARK: Private

    @discardableResult
    private func run<T>(_ body: () throws -> T) throws(DownloadManagerError) -> T {
        do {
            return try body()
        } catch let error as DownloadManagerError {
            throw error
        } catch let error as SQLiteError where Self.damageCodes.contains(error.resultCode) {
            throw Self.damaged(path, error.message)
        } catch let error as SQLiteError where error.isDiskFull {
            throw DownloadManagerError(
                .diskFull,
                "the queue database \(path) could not be written: \(error.message)"
                    + FileSystemSpace.describing(path))
        } catch {
            throw DownloadManagerError(.database, "\(error)")
        }
    }

    private static func info(_ row: SQLiteRow) throws -> DownloadTaskInfo {
        let selection = try row.text("selection").map {
            try JSONDecoder().decode(HLSSelection.self, from: Data($0.utf8))
        }
        // Most tasks send no header of their own: no decoder for them (a queue of ten thousand).
        let headerText = row.text("headers") ?? "[]"
        let headers =
            headerText == "[]" ? [] : try JSONDecoder().decode([String].self, from: Data(headerText.utf8))
        let recording = try row.text("recording").map {
            try JSONDecoder().decode(LiveRecordingSettings.self, from: Data($0.utf8))
        }
        return DownloadTaskInfo(
            id: row.text("id") ?? "", queueID: row.integer("queue_id") ?? 0, url: row.text("url") ?? "",
            kind: DownloadKind(rawValue: row.text("kind") ?? "") ?? .file, selection: selection,
            decrypt: row.integer("decrypt") == 1,
            fileType: DownloadFileType(rawValue: row.text("file_type") ?? "") ?? .video, title: row.text("title") ?? "",
            thumbnailURL: row.text("thumbnail"), state: DownloadState(rawValue: row.text("state") ?? "") ?? .failed,
            progress: row.real("progress") ?? 0, bytesDone: row.integer("bytes_done") ?? 0,
            bytesExpected: row.integer("bytes_expected"), bytesPerSecond: row.real("speed") ?? 0,
            postProcessingProgress: row.real("post_progress") ?? 0, lastError: row.text("last_error"),
            createdAt: Date(timeIntervalSince1970: row.real("created_at") ?? 0),
            finishedAt: row.real("finished_at").map { Date(timeIntervalSince1970: $0) },
            location: row.text("location") ?? "", connections: Int(row.integer("connections") ?? 1), headers: headers,
            exportPath: row.text("export_path"), recording: recording, recordedSeconds: row.real("recorded_seconds"),
            subtitleFormat: row.text("subtitle_format").flatMap(SubtitleFormat.init(rawValue:)),
            keepEncrypted: row.integer("keep_encrypted") == 1)
    }
}
