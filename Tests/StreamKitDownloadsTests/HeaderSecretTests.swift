import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

/// Credentials in request headers (`Authorization`, `Cookie`, …) stay out of `queue.sqlite`: they
/// live in a 0600 file per task under `secrets/`, are sent on every request (also after a reopen,
/// a repair or a migration from an index that stored them in clear) and go with the task.
@Suite(.serialized, .requires(.nginx)) struct HeaderSecretTests {
    typealias Support = ManagerSupport

    static let token = "s3cr3t-value"
    static let headers: HTTPHeaders = ["Authorization": "Bearer s3cr3t-value", "Cookie": "a=b", "X-Plain": "visible"]
    static let masked = ["Authorization: <hidden>", "Cookie: <hidden>", "X-Plain: visible"]

    /// An origin that answers 401 to a request without both credentials, and its file.
    static func origin(rate: Int? = nil) async throws -> (Nginx, Data) {
        let root = try TestRun.makeTemporaryDirectory("secret-origin")
        let data = try writeRandomFile(root, "movie.mp4", bytes: 2 << 20)
        let nginx = try await Nginx.static(
            root: root, limitRatePerConnection: rate,
            requiredHeaders: ["authorization": "Bearer \(token)", "cookie": "a=b"])
        return (nginx, data)
    }

    /// The bytes of the database, its write-ahead log and shared memory.
    static func databaseBytes(_ directory: URL) -> String {
        ["", "-wal", "-shm"].compactMap { FileManager.default.contents(atPath: directory.path + "/queue.sqlite" + $0) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func expectNoSecret(in directory: URL, _ comment: Comment) {
        let bytes = databaseBytes(directory)
        #expect(!bytes.isEmpty)
        #expect(!bytes.contains(token) && !bytes.contains("Cookie: a=b"), comment)
    }

    @Test func credentialsLiveInAPrivateFileAndAreSentAfterAReopen() async throws {
        let (nginx, data) = try await Self.origin(rate: 256 << 10)
        let directory = try TestRun.makeTemporaryDirectory("secret-manager")
        var manager = try await Support.manager(directory: directory)
        var recorder = EventRecorder(await manager.events())
        let url = nginx.url("movie.mp4").absoluteString
        let info = try await manager.add(DownloadRequest(url: url, kind: .file, headers: Self.headers), autoStart: true)
        #expect(info.headers == Self.masked)
        let secrets = TaskSecrets.path(directory: directory, id: info.id)
        #expect(try Self.mode(secrets) == 0o600)
        #expect(try Self.mode(directory.appendingPathComponent("secrets").path) == 0o700)
        #expect(
            TaskSecrets.read(directory: directory, id: info.id)?.contains("Authorization: Bearer \(Self.token)") == true
        )
        try await recorder.wait { events in
            events.contains { if case .progress(let p) = $0 { p.bytesDone > 300 << 10 } else { false } }
        }
        Self.expectNoSecret(in: directory, "while running")
        await manager.close()
        Self.expectNoSecret(in: directory, "after close")
        let record = URL(fileURLWithPath: info.location).deletingLastPathComponent()
            .appendingPathComponent(TaskRecords.requestName)
        let recordText = String(decoding: try Data(contentsOf: record), as: UTF8.self)
        #expect(recordText.contains("<hidden>") && !recordText.contains(Self.token))

        // Reopened, the task resumes from its bytes and still sends the credentials.
        manager = try await Support.manager(directory: directory)
        recorder = EventRecorder(await manager.events())
        let reopened = try #require(await manager.info(info.id))
        #expect(reopened.headers == Self.masked && reopened.bytesDone > 0)
        try await manager.start(info.id)
        try await recorder.wait { $0.contains(.allCompleted) }
        #expect(await manager.info(info.id)?.state == .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == data)
        let log = try await nginx.settledAccessLog()
        #expect(log.count > 1 && log.allSatisfy { $0.status != 401 }, "\(log.map(\.status))")

        // Removing the task removes its secrets file.
        try await manager.remove(info.id)
        #expect(!FileManager.default.fileExists(atPath: secrets))
        await manager.close()
        await nginx.stop()
    }

    @Test func aRepairedQueueFindsTheCredentials() async throws {
        let (nginx, data) = try await Self.origin()
        let directory = try TestRun.makeTemporaryDirectory("secret-repair")
        var manager = try await Support.manager(directory: directory)
        let info = try await manager.add(
            DownloadRequest(url: nginx.url("movie.mp4").absoluteString, kind: .file, headers: Self.headers),
            autoStart: false)
        await manager.close()
        try Data("not a database, not at all, a damaged file of some length".utf8).write(
            to: directory.appendingPathComponent("queue.sqlite"))
        let report = try await DownloadManager.repair(directory: directory)
        #expect(report.stopped == [info.id])
        manager = try await Support.manager(directory: directory)
        let recorder = EventRecorder(await manager.events())
        #expect(await manager.info(info.id)?.headers == Self.masked)
        try await manager.start(info.id)
        try await recorder.wait { $0.contains(.allCompleted) }
        let repaired = await manager.info(info.id)
        #expect(repaired?.state == .success, "\(String(describing: repaired))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == data)
        Self.expectNoSecret(in: directory, "after the repair")
        await manager.close()
        await nginx.stop()
    }

    @Test func anOlderIndexWithCredentialsInClearIsMigratedOnOpen() async throws {
        let (nginx, data) = try await Self.origin()
        let directory = try TestRun.makeTemporaryDirectory("secret-migration")
        var manager = try await Support.manager(directory: directory)
        let info = try await manager.add(
            DownloadRequest(url: nginx.url("movie.mp4").absoluteString, kind: .file, headers: Self.headers),
            autoStart: false)
        await manager.close()
        // As an older version left it: the credentials in clear in the row and the task's record.
        let clear = Self.headers.map { "\($0.name): \($0.value)" }
        do {
            let database = try SQLiteDatabase(path: directory.appendingPathComponent("queue.sqlite").path)
            _ = try database.query(
                "UPDATE tasks SET headers = ? WHERE id = ?",
                [.text(String(decoding: try JSONEncoder().encode(clear), as: UTF8.self)), .text(info.id)])
        }
        let folder = URL(fileURLWithPath: info.location).deletingLastPathComponent()
        TaskRecords.writeRequest(DownloadRequest(url: info.url, kind: .file, headers: Self.headers), folder: folder)
        TaskSecrets.remove(directory: directory, id: info.id)
        #expect(Self.databaseBytes(directory).contains(Self.token))

        manager = try await Support.manager(directory: directory)
        Self.expectNoSecret(in: directory, "after the migration")
        #expect(await manager.info(info.id)?.headers == Self.masked)
        #expect(try Self.mode(TaskSecrets.path(directory: directory, id: info.id)) == 0o600)
        let record = String(
            decoding: try Data(contentsOf: folder.appendingPathComponent(TaskRecords.requestName)), as: UTF8.self)
        #expect(!record.contains(Self.token))
        let recorder = EventRecorder(await manager.events())
        try await manager.start(info.id)
        try await recorder.wait { $0.contains(.allCompleted) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: info.location)) == data)
        await manager.close()
        await nginx.stop()
    }

    @Test func theRuleIsSmall() {
        for name in [
            "Authorization", "proxy-authorization", "COOKIE", "X-Api-Key", "X-Auth-Token", "X-Session-Id",
            "Client-Secret",
        ] {
            #expect(TaskSecrets.isSecret(name: name), "\(name)")
        }
        for name in ["Accept", "User-Agent", "Referer", "Range", "X-Plain"] {
            #expect(!TaskSecrets.isSecret(name: name), "\(name)")
        }
    }
}
