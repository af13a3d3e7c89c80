import Foundation
import StreamKitDownloads
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

#if canImport(Glibc)
import Glibc
#endif

/// The queue and serve's API know DASH like HLS: an MPD is a `dash` task, by its extension or,
/// without one, by its content; it runs into a package with its `manifest.mpd`; an encrypted MPD
/// fails its task saying what to do, unless added with `--keep-encrypted`; `/api/inspect` offers
/// the MPD's Representations and languages.
@Suite(.serialized, .requires(.nginx, .ffmpeg)) struct DASHQueueTests {
    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    /// `queue add` of each, started; returns the task id.
    private func add(_ url: String, home: String, _ extra: [String] = []) async throws -> String {
        let (code, output, error) = await run(["queue", "add", url, "--start", "--home", home] + extra)
        #expect(code == .success, "\(url): \(error)")
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theQueueRunsDASHTasksAndServeOffersTheirChoices() async throws {
        let origin = try await DASHDownloadTests.Origin.make(.dashTimeline)
        let manifest = origin.root.appendingPathComponent("manifest.mpd")
        // The MPD under a name without an extension, and an encrypted copy.
        try FileManager.default.copyItem(at: manifest, to: origin.root.appendingPathComponent("stream"))
        try DASHDownloadTests.protect(manifest, into: origin.root.appendingPathComponent("cenc.mpd"))
        let home = try TestRun.makeTemporaryDirectory("dash-queue-home").path
        let plain = try await add(origin.url, home: home, ["--audio", "fra"])
        let probed = try await add(origin.nginx.url("stream").absoluteString, home: home)
        let refused = try await add(origin.nginx.url("cenc.mpd").absoluteString, home: home)
        let kept = try await add(
            origin.nginx.url("cenc.mpd").absoluteString + "?kept", home: home, ["--keep-encrypted"])
        let (ran, _, runError) = await run(["queue", "run", "--exit-when-done", "--home", home])
        // The encrypted task failed: the run says so.
        #expect(ran == .failure, "\(runError)")
        #expect(runError.contains("Done: 3 succeeded, 1 failed"), "\(runError)")

        let (_, listed, _) = await run(["queue", "list", "--json", "--home", home])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let tasks = try listed.split(separator: "\n").map {
            try decoder.decode(DownloadTaskInfo.self, from: Data($0.utf8))
        }
        let byID = Dictionary(uniqueKeysWithValues: tasks.map { ($0.id, $0) })
        #expect(tasks.map(\.kind) == [.dash, .dash, .dash, .dash], "\(listed)")
        #expect([plain, probed, kept].map { byID[$0]?.state } == [.success, .success, .success], "\(listed)")
        #expect(byID[refused]?.state == .failed)
        let reason = byID[refused]?.lastError ?? ""
        #expect(reason.contains("urn:mpeg:dash:mp4protection:2011") && reason.contains("--keep-encrypted"), "\(reason)")
        #expect(byID[kept]?.keepEncrypted == true && byID[plain]?.keepEncrypted == false)
        for id in [plain, probed, kept] {
            let package = URL(fileURLWithPath: home).appendingPathComponent("library/\(id)")
            let mpd = try String(contentsOf: package.appendingPathComponent("manifest.mpd"), encoding: .utf8)
            #expect(mpd.contains("<AdaptationSet"), "\(id)")
            #expect(mpd.contains("urn:mpeg:dash:mp4protection:2011") == (id == kept), "\(id)")
        }
        let plainMPD = try String(
            contentsOf: URL(fileURLWithPath: home).appendingPathComponent("library/\(plain)/manifest.mpd"),
            encoding: .utf8)
        #expect(plainMPD.contains("lang=\"fra\"") && !plainMPD.contains("lang=\"eng\""), "\(plainMPD)")
        let (_, info, _) = await run(["queue", "info", kept, "--home", home])
        #expect(info.contains("kind            dash\n") && info.contains("DRM             kept encrypted\n"), "\(info)")

        // Serve: the tasks are dash in /api/tasks; /api/inspect reads an MPD's choices.
        let server = try await ServeProcess.start(
            arguments: ["--port", "0"], environment: ["STREAMKIT_HOME": home])
        let client = try HTTPClient()
        let api = ServeAPITests.API(base: "http://127.0.0.1:\(server.port)/", token: server.token, client: client)
        let listing = try await api.call(.get, "api/tasks")
        #expect(
            listing.status == 200 && listing.body.components(separatedBy: "\"kind\":\"dash\"").count == 5,
            "\(listing.body)")
        let inspected = try await api.call(.post, "api/inspect", json: #"{"url":"\#(origin.url)"}"#)
        #expect(inspected.status == 200, "\(inspected.body)")
        let choices = try JSONDecoder().decode(QueueSourceChoices.self, from: Data(inspected.body.utf8))
        #expect(choices.kind == "dash", "\(inspected.body)")
        // Each video Representation as a variant: its bandwidth with the audio's 64 kb/s, as HLS
        // counts a variant's BANDWIDTH.
        #expect(choices.variants.map(\.bandwidth) == [464_000, 214_000], "\(inspected.body)")
        #expect(choices.variants.map(\.resolution) == ["320x240", "160x120"], "\(inspected.body)")
        #expect(choices.audio.map(\.language) == ["eng", "fra"], "\(inspected.body)")
        await client.shutdown()
        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
        await origin.nginx.stop()
    }
}
