import Foundation
import StreamKitDownloads
import StreamKitHLS
import StreamKitTestSupport
import Testing

/// Task and package ids carry a random salt of their home, so that nobody who knows a URL can
/// tell where its download is (`/library/ID/...`).
@Suite struct DownloadIDSaltTests {
    /// Processes that make a new home's salt at the same moment (a `queue add` posted as `queue
    /// run` starts) all get the same one: with two salts the add's credentials were filed under
    /// another id than its task's, and the task was sent without them. A damaged salt file is
    /// replaced.
    @Test func aSaltMadeAtOnceByManyIsOneSalt() async throws {
        for round in 0..<20 {
            let home = try TestRun.makeTemporaryDirectory("salt-race-\(round)")
            let salts = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await runBlocking { try DownloadManager.idSalt(directory: home) } }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(salts.count == 1, "round \(round): \(salts)")
            #expect(
                try String(contentsOf: home.appendingPathComponent("id-salt"), encoding: .utf8) == salts.first! + "\n")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0 != "id-salt" }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
        let damaged = try TestRun.makeTemporaryDirectory("salt-damaged")
        try Data("not a salt".utf8).write(to: damaged.appendingPathComponent("id-salt"))
        let salt = try DownloadManager.idSalt(directory: damaged)
        let again = try DownloadManager.idSalt(directory: damaged)
        #expect(salt.count == 32 && salt == again)
    }

    @Test func theSameURLHasAnotherIDInEveryHomeAndTheSameOneAcrossRuns() async throws {
        let request = DownloadRequest(url: "https://example.com/show/index.m3u8", kind: .hls)
        let unsalted = HLSDownloadJob.packageID(source: request.url, selection: HLSSelection(), decrypt: false)
        var ids: [String] = []
        var salts: [String] = []
        for _ in 0..<2 {
            let home = try TestRun.makeTemporaryDirectory("salt-home")
            let manager = try await ManagerSupport.manager(directory: home, runsTasks: false)
            let info = try await manager.add(request)
            ids.append(info.id)
            salts.append(manager.idSalt)
            #expect(
                info.id
                    == HLSDownloadJob.packageID(
                        source: request.url, selection: HLSSelection(), decrypt: false, salt: manager.idSalt))
            #expect(info.location == home.appendingPathComponent("library/\(info.id)").path)
            await manager.close()

            // The salt is a private file of the home, read again by the next manager.
            let file = home.appendingPathComponent("id-salt").path
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(String(mode, radix: 8))")
            #expect(manager.idSalt.count == 32 && manager.idSalt.allSatisfy(\.isHexDigit))
            let again = try await ManagerSupport.manager(directory: home, runsTasks: false)
            #expect(again.idSalt == manager.idSalt)
            #expect(await again.info(info.id) != nil)
            await again.close()
        }
        #expect(ids[0] != ids[1] && !ids.contains(unsalted), "\(ids)")
        #expect(salts[0] != salts[1])
    }

    /// A home of an older version has no salt: its tasks keep their ids, new ones are salted.
    @Test func anOlderHomeKeepsItsTasksAndGetsASalt() async throws {
        let home = try TestRun.makeTemporaryDirectory("salt-upgrade")
        let manager = try await ManagerSupport.manager(directory: home, runsTasks: false)
        let old = try await manager.add(DownloadRequest(url: "https://example.com/a.m3u8", kind: .hls))
        await manager.close()
        let file = home.appendingPathComponent("id-salt")
        try "not a salt\n".write(to: file, atomically: true, encoding: .utf8)
        let upgraded = try await ManagerSupport.manager(directory: home, runsTasks: false)
        #expect(await upgraded.info(old.id) != nil)
        #expect(upgraded.idSalt != manager.idSalt && upgraded.idSalt.count == 32)
        #expect(try String(contentsOf: file, encoding: .utf8) == upgraded.idSalt + "\n")
        await upgraded.close()
    }
}
