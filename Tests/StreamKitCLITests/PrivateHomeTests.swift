import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitDownloads
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The home is private (docs/CLI.md, "Home"): folders 0700 and files 0600 whatever the umask, an
/// older home closed when opened, and no `user:password@` URL stored.
@Suite(.requires(.nginx, .ffmpeg)) struct PrivateHomeTests {
    /// Runs the built `streamkit` with `arguments` under `umask 000`, so that any mode left to the
    /// umask shows as world-writable.
    static func streamkit(_ arguments: [String], home: URL) async throws -> (status: Int32, errors: String) {
        let process = try ChildProcess(
            executable: "/bin/sh",
            arguments: ["-c", "umask 000; exec \"$0\" \"$@\"", try BuiltProducts.executable("streamkit")] + arguments,
            environment: ["STREAMKIT_HOME": home.path], logName: "streamkit-private")
        let status = try await process.wait(timeout: .seconds(120))
        return (status, process.standardError)
    }

    /// The permission bits of `path` (not following a symbolic link), or `nil` when it is missing.
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }

    /// Every folder and file under `root`, `root` included, relative to it ("" for `root`).
    static func tree(_ root: URL) -> [(path: String, isDirectory: Bool, mode: mode_t)] {
        var entries = [("", true, mode(root.path) ?? 0)]
        for case let relative as String in FileManager.default.enumerator(atPath: root.path) ?? .init() {
            let path = root.appendingPathComponent(relative).path
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            entries.append((relative, (status.st_mode & S_IFMT) == S_IFDIR, status.st_mode & 0o777))
        }
        return entries
    }

    /// An nginx origin with an AES-128 HLS stream in `hls/` and two random files.
    static func origin() async throws -> (nginx: Nginx, root: URL) {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsAES128ExplicitIV, seconds: 4))
        let root = try TestRun.makeTemporaryDirectory("private-origin")
        try FileManager.default.copyItem(at: fixture.directory, to: root.appendingPathComponent("hls"))
        try Data(randomBytes(300_000)).write(to: root.appendingPathComponent("file.bin"))
        try Data(randomBytes(200_000)).write(to: root.appendingPathComponent("other.bin"))
        return (try await Nginx.static(root: root), root)
    }

    @Test func aFreshHomeIsPrivateUnderAPermissiveUmask() async throws {
        let (nginx, _) = try await Self.origin()
        let home = try TestRun.makeTemporaryDirectory("private-fresh").appendingPathComponent("home")
        let outside = try TestRun.makeTemporaryDirectory("private-outside")
        let hls = nginx.url("hls/index.m3u8").absoluteString
        let file = nginx.url("file.bin").absoluteString
        for arguments in [
            ["download", hls], ["download", file, "-o", outside.path + "/", "-j", "3"],
            ["cache", "preload", nginx.url("other.bin").absoluteString], ["queue", "add", file],
        ] {
            let (status, errors) = try await Self.streamkit(arguments, home: home)
            #expect(status == 0, "\(arguments): \(errors)")
        }
        await nginx.stop()

        let entries = Self.tree(home)
        let open = entries.filter { $0.mode != ($0.isDirectory ? 0o700 : 0o600) }
        #expect(open.isEmpty, "\(open.map { "\($0.path) \(String($0.mode, radix: 8))" })")
        // The walk saw what the commands wrote.
        let names = Set(entries.map(\.path))
        for expected in ["library", "cache", "cache/data", "queue.sqlite", "cache/index.sqlite", "cache/lock"] {
            #expect(names.contains(expected), "\(expected) in \(names.sorted())")
        }
        #expect(names.contains { $0.hasSuffix("package.json") })
        #expect(names.contains { $0.hasSuffix(".key") || $0.contains("key") }, "\(names.sorted())")
        #expect(names.contains { $0.hasPrefix("cache/data/") })
        // A file downloaded to a place of the user's choosing is private too.
        #expect(Self.mode(outside.appendingPathComponent("file.bin").path) == 0o600)
    }

    @Test func anUpgradedHomeIsClosedWhenOpened() async throws {
        let (nginx, _) = try await Self.origin()
        let home = try TestRun.makeTemporaryDirectory("private-upgraded").appendingPathComponent("home")
        let file = nginx.url("file.bin").absoluteString
        for arguments in [["cache", "preload", file], ["queue", "add", file]] {
            let (status, errors) = try await Self.streamkit(arguments, home: home)
            #expect(status == 0, "\(arguments): \(errors)")
        }
        // What an older version left: everything readable to others.
        for entry in Self.tree(home) {
            chmod(home.appendingPathComponent(entry.path).path, entry.isDirectory ? 0o755 : 0o644)
        }
        #expect(Self.mode(home.appendingPathComponent("queue.sqlite").path) == 0o644)
        let other = nginx.url("other.bin").absoluteString
        for arguments in [["cache", "preload", other], ["queue", "add", other]] {
            let (status, errors) = try await Self.streamkit(arguments, home: home)
            #expect(status == 0, "\(arguments): \(errors)")
        }
        await nginx.stop()
        for folder in ["", "library", "cache", "cache/data"] {
            #expect(Self.mode(home.appendingPathComponent(folder).path) == 0o700, "\(folder)")
        }
        for database in ["queue.sqlite", "cache/index.sqlite"] {
            for suffix in ["", "-wal", "-shm"] {
                let path = home.appendingPathComponent(database + suffix).path
                #expect(Self.mode(path) == nil || Self.mode(path) == 0o600, "\(database + suffix)")
            }
            #expect(Self.mode(home.appendingPathComponent(database).path) == 0o600, "\(database)")
        }
        for lock in ["queue.lock", "cache/lock"] {
            #expect(Self.mode(home.appendingPathComponent(lock).path) == 0o600, "\(lock)")
        }
    }

    /// The bytes of `database` and its `-wal` and `-shm` files.
    static func databaseBytes(_ database: URL) -> String {
        ["", "-wal", "-shm"].compactMap { FileManager.default.contents(atPath: database.path + $0) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
    }

    @Test func aURLWithAPasswordIsRefusedBeforeAnythingIsWritten() async throws {
        let (nginx, _) = try await Self.origin()
        let home = try TestRun.makeTemporaryDirectory("private-credentials").appendingPathComponent("home")
        let environment = ["STREAMKIT_HOME": home.path]
        let secret = "s3cretPW"
        let withPassword = "http://user:\(secret)@127.0.0.1:\(nginx.port)/file.bin"
        for arguments in [
            ["download", withPassword], ["queue", "add", withPassword], ["cache", "preload", withPassword],
            ["cache", "pin", withPassword], ["play", withPassword, "--player", "none"],
        ] {
            let (code, _, errors) = await CommandRunner.runCapturing(arguments: arguments, environment: environment)
            #expect(code == .usage, "\(arguments)")
            #expect(errors.contains("--header 'Authorization: Basic"), "\(arguments): \(errors)")
            #expect(!FileManager.default.fileExists(atPath: home.path), "\(arguments) wrote to the home")
        }
        // A user name alone is refused too.
        let (userOnly, _, _) = await CommandRunner.runCapturing(
            arguments: ["queue", "add", "http://user@127.0.0.1:\(nginx.port)/file.bin"], environment: environment)
        #expect(userOnly == .usage)

        // The same URLs without the credentials are stored, and their bytes are found where the
        // password is looked for: the check below can see a URL.
        let plain = nginx.url("file.bin").absoluteString
        for arguments in [["queue", "add", plain], ["cache", "preload", plain]] {
            let (code, _, errors) = await CommandRunner.runCapturing(arguments: arguments, environment: environment)
            #expect(code == .success, "\(arguments): \(errors)")
        }
        // The library refuses them too, through the queue's own API and a running queue's requests.
        let manager = try await DownloadManager(
            configuration: DownloadManagerConfiguration(directory: home, runsTasks: false))
        await #expect(throws: DownloadManagerError.self) {
            try await manager.add(DownloadRequest(url: withPassword, kind: .file))
        }
        await manager.close()
        await #expect(throws: DownloadManagerError.self) {
            try await DownloadQueueRemote.send(
                .add(DownloadRequest(url: withPassword, kind: .file), autoStart: false), directory: home,
                timeout: .seconds(2))
        }
        await nginx.stop()
        let queue = Self.databaseBytes(home.appendingPathComponent("queue.sqlite"))
        let cache = Self.databaseBytes(home.appendingPathComponent("cache/index.sqlite"))
        #expect(queue.contains("file.bin") && cache.contains("file.bin"))
        #expect(!queue.contains(secret) && !cache.contains(secret))
    }
}
