import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// Keys given by the user: which key URIs they name, and the IV they put in the plan.
@Suite struct HLSUserKeysTests {
    static let playlist = "https://cdn.example.com/show/v/index.m3u8?token=1"
    static let keyA: [UInt8] = Array(repeating: 0xA, count: 16)
    static let keyB: [UInt8] = Array(repeating: 0xB, count: 16)
    static let all: [UInt8] = Array(repeating: 0xF, count: 16)

    @Test(arguments: [
        // Absolute, as the playlist's URI resolves.
        ("https://cdn.example.com/show/v/k/1.key", "https://cdn.example.com/show/v/k/1.key", true),
        // As written in the media playlist: relative to it.
        ("k/1.key", "https://cdn.example.com/show/v/k/1.key", true),
        ("../keys/1.key?s=2", "https://cdn.example.com/show/keys/1.key?s=2", true),
        ("/k/1.key", "https://cdn.example.com/k/1.key", true),
        // Spaces as the planner writes them.
        ("k/my key.bin", "https://cdn.example.com/show/v/k/my%20key.bin", true),
        ("https://cdn.example.com/show/v/k/2.key", "https://cdn.example.com/show/v/k/1.key", false),
        ("1.key", "https://cdn.example.com/show/v/k/1.key", false),
        ("k/1.key?other", "https://cdn.example.com/show/v/k/1.key", false),
    ])
    func givenURINamesAKeyURI(given: String, planned: String, names: Bool) {
        #expect(HLSUserKeys.names(given, planned, playlistURL: Self.playlist) == names)
    }

    @Test func aKeyForAURIWinsOverTheKeyForAll() {
        let keys = HLSUserKeys(
            key: Self.all,
            keysByURI: [
                .init(uri: "k/1.key", key: Self.keyA),
                .init(uri: "https://cdn.example.com/show/v/k/1.key", key: Self.keyB),
            ])
        #expect(keys.key(forURI: "https://cdn.example.com/show/v/k/1.key", playlistURL: Self.playlist) == Self.keyA)
        #expect(keys.key(forURI: "https://cdn.example.com/show/v/k/2.key", playlistURL: Self.playlist) == Self.all)
        let some = HLSUserKeys(keysByURI: [.init(uri: "k/1.key", key: Self.keyA)])
        #expect(some.key(forURI: "https://cdn.example.com/show/v/k/2.key", playlistURL: Self.playlist) == nil)
        #expect(HLSUserKeys().isEmpty && !some.isEmpty && !HLSUserKeys(iv: Self.keyA).isEmpty)
    }

    @Test func urisNamingNoKeyAreUnmatched() {
        let keys = HLSUserKeys(keysByURI: [
            .init(uri: "k/1.key", key: Self.keyA), .init(uri: "https://other.example/2.key", key: Self.keyB),
            .init(uri: "k/3.key", key: Self.keyB),
        ])
        let files = [
            (uri: "https://cdn.example.com/show/v/k/1.key", playlistURL: Self.playlist),
            (uri: "https://cdn.example.com/show/a/k/3.key", playlistURL: "https://cdn.example.com/show/a/index.m3u8"),
        ]
        #expect(keys.unmatchedURIs(files) == ["https://other.example/2.key"])
        #expect(keys.unmatchedURIs([]) == ["k/1.key", "https://other.example/2.key", "k/3.key"])
    }

    /// `--iv` is the IV of every AES-128 key: written in the local playlist (so the package plays
    /// with it) and used to decrypt; SAMPLE-AES (decrypted with its own IV under `--decrypt`) and a
    /// map with no IV of its own are left alone.
    @Test(arguments: [false, true]) func theGivenIVReplacesThePlaylists(decrypt: Bool) throws {
        let iv: [UInt8] = Array(0..<16)
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-KEY:METHOD=AES-128,URI="a.key"
            #EXTINF:4,
            1.ts
            #EXT-X-KEY:METHOD=AES-128,URI="b.key",IV=0xffffffffffffffffffffffffffffffff
            #EXTINF:4,
            2.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="c.key"
            #EXTINF:4,
            3.ts
            #EXT-X-ENDLIST
            """
        let media = try #require(try Playlist.parse(text).playlist.media)
        let base = "https://cdn.example.com/v/index.m3u8"
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: decrypt, sharesRangedFiles: true, iv: iv)
        let (files, segments) = try planner.plan(
            Array(zip(media.segments, media.resolvedSegments(baseURL: base))), playlistURL: base)
        let segmentFiles = files.filter { $0.kind == .segment }
        if decrypt {
            #expect(segmentFiles.prefix(2).map { $0.decryption?.iv } == [iv, iv])
            #expect(
                segmentFiles[2].decryption
                    == Decryption(keyPath: "video/key-2.key", iv: AES128CBC.iv(mediaSequence: 9), scheme: .sampleAES))
            #expect(segments.allSatisfy { $0.localKeys.isEmpty })
        } else {
            #expect(segments.prefix(2).map { $0.localKeys.first?.iv } == [iv, iv])
            #expect(segments[2].localKeys.first?.method == .sampleAES)
            #expect(segments[2].localKeys.first?.iv == nil)
        }

        // Without a given IV, the playlist's stand: the sequence number's, then the written one.
        var plain = RenditionPlanner(rendition: 0, folder: "video", role: .main, decrypt: true, sharesRangedFiles: true)
        let (clearFiles, _) = try plain.plan(
            Array(zip(media.segments, media.resolvedSegments(baseURL: base))), playlistURL: base)
        #expect(
            clearFiles.filter { $0.kind == .segment }.first?.decryption?.iv == [UInt8](repeating: 0, count: 15) + [7])
    }

    @Test func aMapTakesTheGivenIVOnlyWhenItHadOne() throws {
        let iv: [UInt8] = Array(0..<16)
        let text = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:4
            #EXT-X-KEY:METHOD=AES-128,URI="a.key"
            #EXT-X-MAP:URI="init-a.mp4"
            #EXTINF:4,
            1.m4s
            #EXT-X-KEY:METHOD=AES-128,URI="b.key",IV=0xffffffffffffffffffffffffffffffff
            #EXT-X-MAP:URI="init-b.mp4"
            #EXTINF:4,
            2.m4s
            #EXT-X-ENDLIST
            """
        let resolved = try #require(try Playlist.parse(text).playlist.media).resolvedSegments(
            baseURL: "https://x/v.m3u8")
        let clearMap = HLSUserKeys.overridingIV(iv, in: resolved[0])
        #expect(clearMap.keys[0].iv == iv && clearMap.keys[0].isIVExplicit)
        #expect(clearMap.map?.keys.first?.isIVExplicit == false)
        #expect(clearMap.map == resolved[0].map)
        let encryptedMap = HLSUserKeys.overridingIV(iv, in: resolved[1])
        #expect(encryptedMap.map?.keys.first?.iv == iv && encryptedMap.keys[0].iv == iv)
        #expect(HLSUserKeys.overridingIV(nil, in: resolved[1]) == resolved[1])
    }

    /// A task's secrets file: the header list alone as before, or with the user keys an object.
    @Test func secretsFilesKeepKeysBesideHeaders() throws {
        let lines = ["Cookie: a=b", "Accept: */*"]
        let keys = HLSUserKeys(
            key: Self.all, keysByURI: [.init(uri: "k/1.key", key: Self.keyA), .init(uri: "k/2.key", key: Self.keyB)],
            iv: Self.keyB)
        let both = try #require(TaskSecrets.decoded(TaskSecrets.encoded(lines, keys: keys)))
        #expect(both.headers == lines && both.keys == keys)
        let headersOnly = TaskSecrets.encoded(lines, keys: HLSUserKeys())
        #expect(try JSONDecoder().decode([String].self, from: headersOnly) == lines)
        #expect(TaskSecrets.decoded(headersOnly)?.keys == HLSUserKeys())
        let ivOnly = try #require(TaskSecrets.decoded(TaskSecrets.encoded([], keys: HLSUserKeys(iv: Self.keyA))))
        #expect(ivOnly.keys == HLSUserKeys(iv: Self.keyA) && ivOnly.headers.isEmpty)
        #expect(TaskSecrets.decoded(Data("{".utf8)) == nil)
    }
}
