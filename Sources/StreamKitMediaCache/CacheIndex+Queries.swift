import StreamKitCore

// The questions the store asks one entry or one page at a time, so that what it costs grows with
// what is asked, not with the number of entries (each is served by an index of the schema).
extension CacheIndex {
    /// The row of `key` with its pins, if there is one.
    func record(forKey key: String) throws -> CacheRecord? {
        guard let row = try query("SELECT * FROM resources WHERE key = ?", [.text(key)]).first else { return nil }
        let pins = try query("SELECT owner FROM pins WHERE key = ?", [.text(key)]).compactMap { $0.text("owner") }
        return Self.record(from: row, pins: Set(pins))
    }

    /// What removing the row of `key` frees, without decoding the row: its data file, the bytes
    /// it claims, and whether it is pinned. Nil when there is no such row.
    func holding(key: String) throws -> (fileName: String?, bytes: Int64, isPinned: Bool)? {
        guard
            let row = try query(
                """
                SELECT file_name, cached_bytes,
                    EXISTS (SELECT 1 FROM pins WHERE pins.key = resources.key) AS pinned
                FROM resources WHERE key = ?
                """, [.text(key)]
            ).first
        else { return nil }
        return (row.text("file_name"), row.integer("cached_bytes") ?? 0, (row.integer("pinned") ?? 0) != 0)
    }

    /// Whether a row names `key`.
    func contains(key: String) throws -> Bool {
        try !query("SELECT 1 AS found FROM resources WHERE key = ?", [.text(key)]).isEmpty
    }

    /// The bytes claimed by every row (kept by triggers), and by the pinned ones.
    func usageTotals() throws -> (all: Int64, pinned: Int64) {
        let all = try query("SELECT bytes FROM totals").first?.integer("bytes")
        let pinned = try query(
            """
            SELECT COALESCE(SUM(cached_bytes), 0) AS bytes FROM resources
            WHERE key IN (SELECT DISTINCT key FROM pins)
            """
        ).first?.integer("bytes")
        return (all ?? 0, pinned ?? 0)
    }

    /// Up to `limit` unpinned rows that hold bytes, in eviction order (least recently used first,
    /// the lower key first among equals), after `after`.
    func evictionCandidates(after: (lastAccess: Double, key: String)?, limit: Int) throws -> [EvictionPolicy.Candidate]
    {
        let (lastAccess, key) = after ?? (-Double.greatestFiniteMagnitude, "")
        return try query(
            """
            SELECT key, cached_bytes, last_access FROM resources
            WHERE (last_access, key) > (?, ?) AND cached_bytes > 0
                AND NOT EXISTS (SELECT 1 FROM pins WHERE pins.key = resources.key)
            ORDER BY last_access, key LIMIT ?
            """, [.real(lastAccess), .text(key), .integer(Int64(limit))]
        ).compactMap { row in
            guard let key = row.text("key"), let bytes = row.integer("cached_bytes") else { return nil }
            return EvictionPolicy.Candidate(
                key: key, bytes: bytes, lastAccess: row.real("last_access") ?? 0, isPinned: false, isInUse: false)
        }
    }

    /// The keys of the rows fetched from `url`.
    func keys(forURL url: String) throws -> [String] {
        try query("SELECT key FROM resources WHERE url = ?", [.text(url)]).compactMap { $0.text("key") }
    }

    /// The keys `owner` pins.
    func keys(pinnedBy owner: String) throws -> [String] {
        try query("SELECT key FROM pins WHERE owner = ?", [.text(owner)]).compactMap { $0.text("key") }
    }

    /// Every key.
    func allKeys() throws -> [String] {
        try query("SELECT key FROM resources").compactMap { $0.text("key") }
    }

    /// Whether a row names the data file `fileName`.
    func names(fileName: String) throws -> Bool {
        try !query("SELECT 1 AS found FROM resources WHERE file_name = ?", [.text(fileName)]).isEmpty
    }

    /// How many rows there are, and the bytes they claim (kept by triggers).
    func summary() throws -> (entries: Int, bytes: Int64) {
        let row = try query("SELECT entries, bytes FROM totals").first
        return (Int(row?.integer("entries") ?? 0), row?.integer("bytes") ?? 0)
    }

    /// The `limit` most recently used rows (all when `nil`), most recent first, with their pins.
    func recentRecords(limit: Int?) throws -> [CacheRecord] {
        var pins: [String: Set<String>] = [:]
        for row in try query("SELECT key, owner FROM pins") {
            if let key = row.text("key"), let owner = row.text("owner") { pins[key, default: []].insert(owner) }
        }
        return try query(
            "SELECT * FROM resources ORDER BY last_access DESC, key LIMIT ?", [.integer(Int64(limit ?? -1))]
        ).compactMap { row in Self.record(from: row, pins: row.text("key").flatMap { pins[$0] } ?? []) }
    }
}
