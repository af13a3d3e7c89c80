#if canImport(SQLite3)
import SQLite3
#elseif canImport(CStreamKitSQLite)
import CStreamKitSQLite
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value stored in or read from SQLite.
public enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A failed SQLite call, with the statement or file it concerned and SQLite's own message.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// SQLite's primary result code, such as `SQLITE_BUSY` (5) or `SQLITE_CORRUPT` (11).
    public let resultCode: Int32
    /// SQLite's message for the failure.
    public let message: String
    /// The SQL or file path that was being used.
    public let context: String

    /// Whether another connection holds the lock (`SQLITE_BUSY` or `SQLITE_LOCKED`).
    public var isBusy: Bool { resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED }

    /// Whether the disk or quota is full (`SQLITE_FULL`).
    public var isDiskFull: Bool { resultCode == SQLITE_FULL }

    public var description: String { "SQLite error \(resultCode) (\(message)) in: \(context)" }
}

/// One row of a query result, with values by column position or name.
public struct SQLiteRow: Sendable {
    /// The column names, in order.
    public let columns: [String]
    /// The values, in column order.
    public let values: [SQLiteValue]
    /// Where each column is, shared by the rows of one query: a row of thirty columns read by name
    /// would otherwise compare names hundreds of times (a queue of ten thousand tasks).
    private let positions: [String: Int]

    /// A row of `values` under `columns`.
    public init(columns: [String], values: [SQLiteValue]) {
        self.init(columns: columns, positions: Self.positions(of: columns), values: values)
    }

    init(columns: [String], positions: [String: Int], values: [SQLiteValue]) {
        self.columns = columns
        self.positions = positions
        self.values = values
    }

    /// Each column's index (the first, when two share a name).
    static func positions(of columns: [String]) -> [String: Int] {
        var positions: [String: Int] = [:]
        for (index, name) in columns.enumerated() where positions[name] == nil { positions[name] = index }
        return positions
    }

    /// The value of the column named `name`, or `.null` when there is no such column.
    public subscript(_ name: String) -> SQLiteValue {
        guard let index = positions[name] else { return .null }
        return values[index]
    }

    /// The column as an integer, or `nil` when it is NULL or another type.
    public func integer(_ name: String) -> Int64? {
        if case .integer(let value) = self[name] { return value }
        return nil
    }

    /// The column as a double (integers are converted), or `nil`.
    public func real(_ name: String) -> Double? {
        switch self[name] {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The column as text, or `nil`.
    public func text(_ name: String) -> String? {
        if case .text(let value) = self[name] { return value }
        return nil
    }

    /// The column as bytes (text is returned as its UTF-8), or `nil`.
    public func blob(_ name: String) -> [UInt8]? {
        switch self[name] {
        case .blob(let value): value
        case .text(let value): Array(value.utf8)
        default: nil
        }
    }
}

/// One SQLite connection: prepared statements cached by SQL text, transactions, WAL.
///
/// Not `Sendable`: a connection belongs to one owner (an actor or a single task) at a time.
public final class SQLiteDatabase {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// The file the database lives in, or `:memory:`.
    public let path: String

    /// Opens (creating if needed) the database at `path` in WAL mode with a busy timeout. The file
    /// and its `-wal`, `-shm` and `-journal` files are made 0600 (``PrivateFiles``): SQLite makes
    /// the latter with the main file's mode.
    ///
    /// - Parameters:
    ///   - path: A file path, or `:memory:` for a private in-memory database.
    ///   - busyTimeoutMilliseconds: How long a call waits for another connection's lock.
    ///   - setsWriteAheadLog: Whether this connection switches the file to WAL; a reader of a file
    ///     another connection owns leaves it as that connection set it.
    /// - Throws: ``SQLiteError`` when the file cannot be opened or is not a database.
    public init(
        path: String, busyTimeoutMilliseconds: Int32 = 5_000, setsWriteAheadLog: Bool = true
    ) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteError(resultCode: status, message: message, context: "open \(path)")
        }
        handle = opened
        self.path = path
        if path != ":memory:" {
            // Before the first write: SQLite creates the main file as the umask allows.
            for suffix in ["", "-wal", "-shm", "-journal"] { PrivateFiles.restrictFile(path + suffix) }
        }
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 0)
        if path != ":memory:" && setsWriteAheadLog {
            // Turning a new file to WAL takes an exclusive lock, for which SQLite does not wait:
            // a second process opening the same new file at that moment got "database is locked".
            let deadline = ContinuousClock.now + .milliseconds(Int(busyTimeoutMilliseconds))
            while true {
                do throws(SQLiteError) {
                    try execute("PRAGMA journal_mode=WAL")
                    break
                } catch  where error.isBusy && ContinuousClock.now < deadline {
                    usleep(5_000)
                }
            }
            try execute("PRAGMA synchronous=NORMAL")
        }
        try execute("PRAGMA foreign_keys=ON")
        // Statement journals (a DELETE that fires triggers or cascades inside a transaction) and
        // temporary tables in memory, not in files under /var/tmp: on ext4 they cost an eviction
        // of 10,000 cache entries a third of its time.
        try execute("PRAGMA temp_store=MEMORY")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters and whose rows are not needed.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw SQLiteError(resultCode: status, message: text, context: sql)
        }
    }

    /// Runs one statement with `parameters` bound to its `?` placeholders, returning every row.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(parameters, to: statement, sql: sql)
        let columnCount = sqlite3_column_count(statement)
        let columns = (0..<columnCount).map { String(cString: sqlite3_column_name(statement, $0)) }
        let positions = SQLiteRow.positions(of: columns)
        var rows: [SQLiteRow] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error(status, sql) }
            let values = (0..<columnCount).map { value(statement, $0) }
            rows.append(SQLiteRow(columns: columns, positions: positions, values: values))
        }
        return rows
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws.
    @discardableResult
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The row id of the last successful insert on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows changed by the last insert, update or delete.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The version of the SQLite library, such as `3.40.1`.
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    // MARK: Private

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status, sql) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ parameters: [SQLiteValue], to statement: OpaquePointer, sql: String) throws(SQLiteError) {
        guard parameters.count == Int(sqlite3_bind_parameter_count(statement)) else {
            throw SQLiteError(
                resultCode: SQLITE_RANGE,
                message: "expected \(sqlite3_bind_parameter_count(statement)) parameters, got \(parameters.count)",
                context: sql)
        }
        for (offset, parameter) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch parameter {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .real(let value): status = sqlite3_bind_double(statement, index, value)
            case .text(let value): status = sqlite3_bind_text(statement, index, value, -1, transientDestructor)
            case .blob(let value):
                status = value.withUnsafeBytes {
                    sqlite3_bind_blob64(statement, index, $0.baseAddress, sqlite3_uint64($0.count), transientDestructor)
                }
            }
            guard status == SQLITE_OK else { throw error(status, sql) }
        }
    }

    private func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(statement, column)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let base = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: base, count: count)))
        default: return .null
        }
    }

    private func error(_ status: Int32, _ sql: String) -> SQLiteError {
        SQLiteError(resultCode: status, message: String(cString: sqlite3_errmsg(handle)), context: sql)
    }
}

#if canImport(SQLite3)
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
#else
private let transientDestructor = sk_sqlite_transient()
#endif
