import Foundation
import StreamKitHLS
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// Playlists as they come from real servers, each carrying one quirk that players read past (the files in
/// `PlaylistQuirks/`, written by us; each names its quirk in its second line). Every one inspects and downloads
/// with a warning naming the line, and is refused under `--strict`, naming the same line.
@Suite(.requires(.nginx, .ffmpeg)) struct PlaylistQuirkTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "PlaylistQuirks")

    /// Each file's line at fault, and a part of the warning about it.
    static let quirks: [String: (line: Int, warning: String)] = [
        "bandwidth-decimal.m3u8": (3, "BANDWIDTH is a decimal number where an integer is due: '1755600.0'"),
        "bom-crlf-lowercase.m3u8": (4, "tag name ext-x-targetduration is not upper-case"),
        "daterange-scte35-cmd-invalid.m3u8": (6, "SCTE35-CMD is not a hexadecimal sequence"),
        "daterange-scte35-out-not-hexadecimal.m3u8": (6, "SCTE35-OUT is not a hexadecimal sequence"),
        "extinf-iptv-attributes.m3u8": (7, "EXTINF duration is not a decimal number"),
        "iv-placeholder-method-none.m3u8": (
            5, "IV is not a hexadecimal sequence (0x…): '[IV]'; ignored, as METHOD=NONE"
        ),
        "junk-line-in-multivariant.m3u8": (
            5, "URI line without an EXT-X-STREAM-INF tag before it; the line is ignored"
        ),
        "media-sequence-twice.m3u8": (6, "EXT-X-MEDIA-SEQUENCE appears again"),
        "media-tags-in-multivariant.m3u8": (3, "EXT-X-TARGETDURATION belongs in a media playlist"),
        "negative-media-sequence.m3u8": (5, "EXT-X-MEDIA-SEQUENCE is negative: '-2680'; read as 0"),
        "playlist-type-live.m3u8": (4, "EXT-X-PLAYLIST-TYPE must be EVENT or VOD, not 'LIVE'"),
        "program-date-time-unreadable.m3u8": (5, "EXT-X-PROGRAM-DATE-TIME is not an ISO 8601 date-time"),
        "second-extinf-before-uri.m3u8": (6, "a second EXTINF before the segment's URI line"),
        "session-key-in-media.m3u8": (6, "EXT-X-SESSION-KEY belongs in a multivariant playlist"),
        "stream-inf-without-bandwidth.m3u8": (3, "EXT-X-STREAM-INF needs BANDWIDTH; read as 0"),
        "stream-inf-without-uri.m3u8": (3, "EXT-X-STREAM-INF is not followed by a URI line"),
        "target-duration-decimal.m3u8": (4, "EXT-X-TARGETDURATION is a decimal number where an integer is due"),
        "trailing-extinf.m3u8": (
            16, "EXTINF is not followed by a URI line; kept as written, as a segment still being written"
        ),
        "uri-line-without-extinf.m3u8": (9, "URI line without an EXTINF tag before it; its duration is taken as"),
        "version-not-a-number.m3u8": (3, "EXT-X-VERSION is not a positive decimal integer: 'NaN'"),
    ]

    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    @Test func everyFileOfTheFolderIsListedAndNamesItsQuirk() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter {
            $0.hasSuffix(".m3u8")
        }
        #expect(Set(files) == Set(Self.quirks.keys))
        for file in files {
            let text = try String(contentsOf: Self.folder.appendingPathComponent(file), encoding: .utf8)
            #expect(
                text.split(whereSeparator: \.isNewline).dropFirst().first?.hasPrefix("# quirk: ") == true, "\(file)")
        }
    }

    /// An origin holding the 5 segments of a TS fixture (`seg000.ts`… and its clean `index.m3u8`) and every
    /// quirk playlist beside them.
    private func origin() async throws -> Nginx {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsTS))
        let root = try TestRun.makeTemporaryDirectory("quirks-origin")
        for name in try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path) {
            try FileManager.default.copyItem(
                at: fixture.directory.appendingPathComponent(name), to: root.appendingPathComponent(name))
        }
        for name in Self.quirks.keys {
            try FileManager.default.copyItem(
                at: Self.folder.appendingPathComponent(name), to: root.appendingPathComponent(name))
        }
        return try await Nginx.static(root: root)
    }

    @Test(arguments: quirks.keys.sorted())
    func inspectWarnsNamingTheLineAndStrictModeFails(file: String) async throws {
        let expected = try #require(Self.quirks[file])
        let path = Self.folder.appendingPathComponent(file).path
        let (code, output, error) = await run(["inspect", path])
        #expect(code == .success, "\(error)")
        #expect(output.hasPrefix("\(path): "))
        #expect(error.contains("warning: \(path): line \(expected.line): \(expected.warning)"), "\(error)")
        let (strictCode, strictOutput, strictError) = await run(["inspect", path, "--strict"])
        #expect(strictCode == .failure && strictOutput.isEmpty)
        #expect(strictError.contains("error: \(path): line \(expected.line): \(expected.warning)"), "\(strictError)")
    }

    @Test(arguments: quirks.keys.sorted())
    func downloadWarnsOnceAndGoesOnAndStrictModeRefuses(file: String) async throws {
        let expected = try #require(Self.quirks[file])
        let nginx = try await origin()
        let url = nginx.url(file).absoluteString
        let home = try TestRun.makeTemporaryDirectory("quirks-home")
        let package = home.appendingPathComponent("package")
        let (code, _, error) = await run(["download", url, "-o", package.path, "--home", home.path])
        #expect(code == .success, "\(error)")
        let warning = "warning: \(url): line \(expected.line): \(expected.warning)"
        #expect(error.components(separatedBy: warning).count == 2, "once: \(error)")
        // Every segment of the origin is in the package, in a playlist that parses with no warning.
        let index = try Playlist.parse(Array(try Data(contentsOf: package.appendingPathComponent("index.m3u8"))))
        let media: MediaPlaylist
        switch index.playlist {
        case .media(let playlist): media = playlist
        case .multivariant(let master):
            let variant = try #require(master.variants.first)
            media = try #require(
                try Playlist.parse(Array(try Data(contentsOf: package.appendingPathComponent(variant.uri)))).playlist
                    .media)
        }
        #expect(media.segments.count == 5 && media.hasEndList)
        let strictPackage = home.appendingPathComponent("strict")
        let (strictCode, _, strictError) = await run([
            "download", url, "-o", strictPackage.path, "--home", home.path, "--strict",
        ])
        #expect(strictCode == .failure)
        #expect(strictError.contains("line \(expected.line): \(expected.warning)"), "\(strictError)")
    }
}
