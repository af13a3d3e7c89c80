import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@Suite struct SQLiteDatabaseTests {
    private func open() throws -> SQLiteDatabase {
        try SQLiteDatabase(path: try TestRun.makeTemporaryDirectory("sqlite").appendingPathComponent("test.db").path)
    }

    @Test func valuesRoundTripThroughParameters() throws {
        let database = try open()
        try database.execute(
            "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, size INTEGER, ratio REAL, data BLOB)")
        try database.query(
            "INSERT INTO item (name, size, ratio, data) VALUES (?, ?, ?, ?)",
            [.text("clip ☃"), .integer(1 << 40), .real(0.5), .blob([0, 1, 255])])
        #expect(database.lastInsertRowID == 1 && database.changes == 1)
        try database.query("INSERT INTO item (name) VALUES (?)", [.null])
        let rows = try database.query("SELECT * FROM item ORDER BY id")
        #expect(rows.count == 2)
        #expect(rows[0].text("name") == "clip ☃")
        #expect(rows[0].integer("size") == 1 << 40)
        #expect(rows[0].real("ratio") == 0.5)
        #expect(rows[0].blob("data") == [0, 1, 255])
        #expect(rows[1]["name"] == .null && rows[1]["missing"] == .null)
    }

    @Test func usesWriteAheadLogging() throws {
        let database = try open()
        #expect(try database.query("PRAGMA journal_mode").first?.text("journal_mode") == "wal")
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        let database = try open()
        try database.execute("CREATE TABLE t (v INTEGER)")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try database.transaction {
                try database.query("INSERT INTO t VALUES (1)")
                throw Abort()
            }
        }
        try database.transaction { try database.query("INSERT INTO t VALUES (2)") }
        #expect(try database.query("SELECT v FROM t").map { $0.integer("v") } == [2])
    }

    @Test func errorsNameTheStatement() throws {
        let database = try open()
        let error = #expect(throws: SQLiteError.self) { try database.query("SELECT * FROM nowhere") }
        #expect(error?.context == "SELECT * FROM nowhere")
        #expect(error?.message.contains("no such table") == true)
        #expect(throws: SQLiteError.self) { try database.query("SELECT ?", []) }
        #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: "/nonexistent-dir/x.db") }
    }
}
