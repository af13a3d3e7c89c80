import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// One entry as the index stores it.
struct CacheRecord: Hashable, Sendable {
    var key: String
    var hash: String
    var url: String
    var fileName: String?
    var metadata: MediaCacheMetadata?
    /// The bytes the index claims are on disk.
    var spans: ByteRangeSet
    var lastAccess: Double
    var created: Double
    var pins: Set<String>

    var entry: MediaCacheEntry {
        MediaCacheEntry(
            key: key, url: url, fileName: fileName, length: metadata?.length, cachedBytes: spans.byteCount,
            mimeType: metadata?.mimeType, pinnedBy: pins.sorted(), lastAccess: lastAccess, spans: spans)
    }
}

/// The cache's index in SQLite (WAL): one row per resource with its cached spans (a range set,
/// not a bitmap), length, validators, media type and last access, and a row per pin.
///
/// Rows only ever claim bytes already written to the data file; see ``CacheStore``.
final class CacheIndex {
    private let database: SQLiteDatabase
    static let schemaVersion: Int64 = 2

    init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        // No fsync: the index promises to survive a killed process (its WAL is in the page cache,
        // like the data files it describes, which are not synced either), not a machine crash, and
        // an fsync under the store's lock would stall every reader on a busy disk.
        try database.execute("PRAGMA synchronous=OFF")
        // Pages in memory up to 8 MiB (SQLite's default is 2 MiB): an eviction of 10,000 entries
        // changes more pages than that in its one transaction, and spilling them cost it 6%.
        try database.execute("PRAGMA cache_size=-8192")
        guard try version() != Self.schemaVersion else { return }
        // Two processes may open a new cache at once (a CLI command and a library reader): the
        // version is read again under the write lock, so that only the first writes the schema
        // and the second does not drop the tables the first has just filled in.
        try database.transaction {
            let version = try version()
            guard version != Self.schemaVersion else { return }
            // Version 1 lacked only the indexes: its rows stay.
            if version != 1 {
                try database.execute(
                    """
                    DROP TABLE IF EXISTS totals;
                    DROP TABLE IF EXISTS pins;
                    DROP TABLE IF EXISTS resources;
                    CREATE TABLE resources (
                        key TEXT PRIMARY KEY,
                        hash TEXT NOT NULL UNIQUE,
                        url TEXT NOT NULL,
                        final_url TEXT,
                        file_name TEXT,
                        content_length INTEGER,
                        mime_type TEXT,
                        entity_tag TEXT,
                        last_modified REAL,
                        if_range TEXT,
                        spans TEXT NOT NULL DEFAULT '[]',
                        cached_bytes INTEGER NOT NULL DEFAULT 0,
                        last_access REAL NOT NULL,
                        created REAL NOT NULL
                    );
                    CREATE TABLE pins (
                        key TEXT NOT NULL REFERENCES resources(key) ON DELETE CASCADE,
                        owner TEXT NOT NULL,
                        PRIMARY KEY (key, owner)
                    );
                    """)
            }
            // So that opening, eviction and listing read only what they need, not every row: the
            // number of rows and their bytes kept by triggers, eviction order, entries by the URL
            // they were fetched from, by data file (the sweep of stray files), pins by owner.
            try database.execute(
                """
                CREATE TABLE totals (
                    id INTEGER PRIMARY KEY CHECK (id = 0),
                    entries INTEGER NOT NULL,
                    bytes INTEGER NOT NULL
                );
                INSERT INTO totals VALUES (
                    0, (SELECT COUNT(*) FROM resources), (SELECT COALESCE(SUM(cached_bytes), 0) FROM resources));
                CREATE TRIGGER resources_added AFTER INSERT ON resources BEGIN
                    UPDATE totals SET entries = entries + 1, bytes = bytes + new.cached_bytes;
                END;
                CREATE TRIGGER resources_removed AFTER DELETE ON resources BEGIN
                    UPDATE totals SET entries = entries - 1, bytes = bytes - old.cached_bytes;
                END;
                CREATE TRIGGER resources_changed AFTER UPDATE OF cached_bytes ON resources BEGIN
                    UPDATE totals SET bytes = bytes + new.cached_bytes - old.cached_bytes;
                END;
                CREATE INDEX resources_by_access ON resources(last_access, key);
                CREATE INDEX resources_by_url ON resources(url);
                CREATE INDEX resources_by_file ON resources(file_name);
                CREATE INDEX pins_by_owner ON pins(owner);
                PRAGMA user_version = \(Self.schemaVersion);
                """)
        }
    }

    private func version() throws -> Int64 {
        try database.query("PRAGMA user_version").first?.integer("user_version") ?? 0
    }

    /// Every row, with its pins.
    func loadAll() throws -> [CacheRecord] {
        var pins: [String: Set<String>] = [:]
        for row in try database.query("SELECT key, owner FROM pins") {
            if let key = row.text("key"), let owner = row.text("owner") { pins[key, default: []].insert(owner) }
        }
        return try database.query("SELECT * FROM resources").compactMap { row in
            Self.record(from: row, pins: row.text("key").flatMap { pins[$0] } ?? [])
        }
    }

    /// A row of `resources` as a record.
    static func record(from row: SQLiteRow, pins: Set<String>) -> CacheRecord? {
        guard let key = row.text("key"), let hash = row.text("hash"), let url = row.text("url") else { return nil }
        var metadata: MediaCacheMetadata?
        if let length = row.integer("content_length") {
            metadata = MediaCacheMetadata(
                length: length, mimeType: row.text("mime_type"),
                entityTag: row.text("entity_tag").flatMap(EntityTag.init(headerValue:)),
                lastModified: row.real("last_modified").map { Date(timeIntervalSince1970: $0) },
                ifRange: row.text("if_range").flatMap(Self.ifRange(from:)), finalURL: row.text("final_url") ?? url)
        }
        return CacheRecord(
            key: key, hash: hash, url: url, fileName: row.text("file_name"), metadata: metadata,
            spans: decodeSpans(row.text("spans") ?? "[]"), lastAccess: row.real("last_access") ?? 0,
            created: row.real("created") ?? 0, pins: pins)
    }

    /// Writes the whole row (not the pins).
    func save(_ record: CacheRecord) throws {
        let metadata = record.metadata
        try database.query(
            """
            INSERT INTO resources (key, hash, url, final_url, file_name, content_length, mime_type, entity_tag,
                last_modified, if_range, spans, cached_bytes, last_access, created)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET url = excluded.url, final_url = excluded.final_url,
                file_name = excluded.file_name, content_length = excluded.content_length,
                mime_type = excluded.mime_type, entity_tag = excluded.entity_tag,
                last_modified = excluded.last_modified, if_range = excluded.if_range, spans = excluded.spans,
                cached_bytes = excluded.cached_bytes, last_access = excluded.last_access
            """,
            [
                .text(record.key), .text(record.hash), .text(record.url), optional(metadata?.finalURL),
                optional(record.fileName), metadata.map { .integer($0.length) } ?? .null, optional(metadata?.mimeType),
                optional(metadata?.entityTag?.headerValue),
                metadata?.lastModified.map { .real($0.timeIntervalSince1970) } ?? .null,
                optional(metadata?.ifRange?.headerValue), .text(Self.encodeSpans(record.spans)),
                .integer(record.spans.byteCount), .real(record.lastAccess), .real(record.created),
            ])
    }

    /// Updates the claimed spans (and last access) of an existing row.
    func saveSpans(key: String, spans: ByteRangeSet, lastAccess: Double) throws {
        try database.query(
            "UPDATE resources SET spans = ?, cached_bytes = ?, last_access = ? WHERE key = ?",
            [.text(Self.encodeSpans(spans)), .integer(spans.byteCount), .real(lastAccess), .text(key)])
    }

    func delete(key: String) throws {
        try database.query("DELETE FROM resources WHERE key = ?", [.text(key)])
    }

    func deleteAll() throws {
        try database.execute("DELETE FROM pins; DELETE FROM resources;")
    }

    func addPin(key: String, owner: String) throws {
        try database.query("INSERT OR IGNORE INTO pins (key, owner) VALUES (?, ?)", [.text(key), .text(owner)])
    }

    func removePin(key: String, owner: String) throws {
        try database.query("DELETE FROM pins WHERE key = ? AND owner = ?", [.text(key), .text(owner)])
    }

    func transaction<T>(_ body: () throws -> T) throws -> T { try database.transaction(body) }

    func execute(_ sql: String) throws { try database.execute(sql) }

    func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [SQLiteRow] {
        try database.query(sql, parameters)
    }

    // MARK: Encoding

    /// `[[0,100],[200,300]]`: the JSON ``ByteRangeSet`` encodes to, written without an encoder.
    static func encodeSpans(_ spans: ByteRangeSet) -> String {
        "[" + spans.ranges.map { "[\($0.lowerBound),\($0.upperBound)]" }.joined(separator: ",") + "]"
    }

    /// Reads ``encodeSpans(_:)``'s output (spaces allowed); damaged text claims nothing, an empty
    /// set, so that the bytes are fetched again. By hand: a JSONDecoder per row was a quarter of
    /// opening a cache of a hundred thousand entries.
    static func decodeSpans(_ text: String) -> ByteRangeSet {
        var bytes = Array(text.utf8.filter { $0 != UInt8(ascii: " ") })[...]
        func take(_ byte: Character) -> Bool {
            guard bytes.first == byte.asciiValue else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        func number() -> Int64? {
            let digits = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !digits.isEmpty, digits.count <= 18 else { return nil }
            bytes = bytes.dropFirst(digits.count)
            return digits.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
        }
        guard take("[") else { return ByteRangeSet() }
        var ranges: [ByteRange] = []
        if !take("]") {
            repeat {
                guard take("["), let lower = number(), take(","), let upper = number(), take("]"),
                    let range = ByteRange(validating: lower, upper)
                else { return ByteRangeSet() }
                ranges.append(range)
            } while take(",")
            guard take("]") else { return ByteRangeSet() }
        }
        return bytes.isEmpty ? ByteRangeSet(ranges) : ByteRangeSet()
    }

    static func ifRange(from text: String) -> HTTPClientRequest.IfRange? {
        if let tag = EntityTag(headerValue: text), !tag.isWeak { return .entityTag(tag) }
        return HTTPDate.parse(text).map { .lastModified($0) }
    }

    private func optional(_ text: String?) -> SQLiteValue { text.map { .text($0) } ?? .null }
}
