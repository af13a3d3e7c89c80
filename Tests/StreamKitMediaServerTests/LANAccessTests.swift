import Foundation
import StreamKitHTTPServer
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

/// The media server on every interface (0.0.0.0, reached through 127.0.0.1): nothing is read
/// without the token, and players get in with `?token=` (ffmpeg keeps the cookie the redirect
/// sets for the playlist's segments) or with `Authorization: Bearer`.
@Suite struct LANAccessTests {
    @Test func everyRouteWantsTheToken() async throws {
        let library = try LibraryServer.start(
            { root in try write("#EXTM3U\n", "index.m3u8", in: root.appendingPathComponent("item")) },
            configure: { $0.host = "0.0.0.0" })
        let token = library.server.accessToken
        for target in ["/", "/api/tasks", "/library/item/index.m3u8", "/library/item", "/proxy/file?url=x"] {
            #expect(try await library.get(target).status == 401, "\(target)")
            #expect(try await library.get(target, "Authorization: Bearer \(token)\r\n").status != 401, "\(target)")
        }
        #expect(try await library.get("/library/item/index.m3u8", "Authorization: Bearer \(token)\r\n").status == 200)
        await library.stop()
    }

    @Test(.requires(.ffprobe)) func ffprobePlaysWithTheTokenInTheURLOrABearerHeader() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let library = try LibraryServer.start(
            { root in try FileManager.default.copyItem(at: fixture.directory, to: root.appendingPathComponent("item"))
            },
            configure: { $0.host = "0.0.0.0" })
        let token = library.server.accessToken
        let url = "http://127.0.0.1:\(library.port)/library/item/index.m3u8"
        // Every packet read: every segment fetched.
        func packets(_ arguments: [String]) async throws -> ToolOutput {
            try await Tool.ffprobe.run(
                [
                    "-v", "error", "-count_packets", "-show_entries", "stream=index,codec_type,nb_read_packets", "-of",
                    "csv=p=0",
                ]
                    + arguments,
                allowFailure: true)
        }
        let direct = try await packets([fixture.entryFile.path])
        #expect(direct.status == 0 && !direct.standardOutput.isEmpty)

        let refused = try await packets([url])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("401"), "\(refused.standardError)")

        // The redirect sets the cookie; ffmpeg sends it with the playlist and every segment.
        let signedIn = try await packets([url + "?token=\(token)"])
        #expect(signedIn.status == 0, "\(signedIn.standardError)")
        #expect(signedIn.standardOutput == direct.standardOutput)

        let bearer = try await packets(["-headers", "Authorization: Bearer \(token)\r\n", url])
        #expect(bearer.status == 0, "\(bearer.standardError)")
        #expect(bearer.standardOutput == direct.standardOutput)
        await library.stop()
    }
}
