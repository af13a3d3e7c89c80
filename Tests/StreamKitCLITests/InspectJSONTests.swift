import Foundation
import StreamKitCLI
import StreamKitHLS
import StreamKitTestSupport
import Testing

/// `inspect --json`: the written model as `JSONEncoder` would give it, and the resolved meaning beside it.
@Suite struct InspectJSONTests {
    private func inspect(_ path: String) async throws -> [String: Any] {
        let (code, output, error) = await CommandRunner.runCapturing(arguments: ["inspect", path, "--json"])
        #expect(code == .success && error.isEmpty)
        #expect(output.hasSuffix("}\n") && output.dropLast().split(separator: "\n").count == 1)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    private func write(_ text: String, name: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    /// Byte ranges whose offset is carried (§4.4.4.2), keys with derived and explicit IVs, a map, relative URIs
    /// with `..` and a query, a discontinuity, a date-time extrapolated backwards.
    private let media = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:6
        #EXT-X-MEDIA-SEQUENCE:100
        #EXT-X-DISCONTINUITY-SEQUENCE:3
        #EXT-X-MAP:URI="init.mp4",BYTERANGE="800@0"
        #EXT-X-KEY:METHOD=AES-128,URI="../keys/k1.bin"
        #EXTINF:4,
        #EXT-X-BYTERANGE:100@0
        media.mp4
        #EXTINF:5.5,
        #EXT-X-BYTERANGE:200
        media.mp4
        #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k2",IV=0x000102030405060708090A0B0C0D0E0F
        #EXTINF:6,
        #EXT-X-BYTERANGE:300
        media.mp4
        #EXTINF:6,
        #EXT-X-BYTERANGE:50@10
        other.mp4
        #EXT-X-DISCONTINUITY
        #EXT-X-KEY:METHOD=NONE
        #EXT-X-PROGRAM-DATE-TIME:2024-05-01T12:00:00.000Z
        #EXTINF:2.25,
        sub/tail.ts?x=1
        #EXT-X-ENDLIST

        """

    @Test func resolvesEachSegmentOfAMediaPlaylist() async throws {
        let root = try TestRun.makeTemporaryDirectory("inspect-json")
        let directory = root.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = try write(media, name: "index.m3u8", in: directory)
        let object = try await inspect(file)
        #expect(object["kind"] as? String == "media")
        let written = try #require((object["playlist"] as? [String: Any])?["segments"] as? [[String: Any]])
        let resolved = try #require(object["resolved"] as? [String: Any])
        #expect(resolved["playlistURL"] as? String == "file://\(file)")
        let segments = try #require(resolved["segments"] as? [[String: Any]])
        #expect(written.count == 5 && segments.count == 5)
        // As written, the second range has no offset; resolved, it starts where the first one ended.
        #expect((written[1]["byteRange"] as? [String: Any])?["offset"] == nil)
        func range(_ index: Int) -> [Int]? {
            (segments[index]["byteRange"] as? [String: Int]).map { [$0["offset"] ?? -1, $0["length"] ?? -1] }
        }
        #expect(range(0) == [0, 100] && range(1) == [100, 200] && range(2) == [300, 300])
        #expect(range(3) == [10, 50] && range(4) == nil)
        let base = "file://\(directory.path)"
        #expect(
            segments.map { $0["uri"] as? String } == [
                "\(base)/media.mp4", "\(base)/media.mp4", "\(base)/media.mp4", "\(base)/other.mp4",
                "\(base)/sub/tail.ts?x=1",
            ])
        #expect(segments.map { $0["mediaSequence"] as? Int } == [100, 101, 102, 103, 104])
        #expect(segments.map { $0["discontinuitySequence"] as? Int } == [3, 3, 3, 3, 4])
        #expect(segments.map { $0["startTime"] as? Double } == [0, 4, 9.5, 15.5, 21.5])
        #expect(written.map { $0["duration"] as? Double } == [4, 5.5, 6, 6, 2.25])
        // The first key's IV is the media sequence number; the second's is written.
        func key(_ index: Int) -> [String: String]? { (segments[index]["keys"] as? [[String: String]])?.first }
        #expect(
            key(1) == [
                "method": "AES-128", "uri": "file://\(root.path)/keys/k1.bin", "keyFormat": "identity",
                "iv": "00000000000000000000000000000065", "ivSource": "mediaSequence",
            ])
        #expect(key(0)?["iv"] == "00000000000000000000000000000064")
        for index in [2, 3] {
            #expect(
                key(index) == [
                    "method": "AES-128", "uri": "https://keys.example.com/k2", "keyFormat": "identity",
                    "iv": "000102030405060708090a0b0c0d0e0f", "ivSource": "explicit",
                ])
        }
        #expect((segments[4]["keys"] as? [Any])?.isEmpty == true)
        let map = try #require(segments[4]["map"] as? [String: Any])
        #expect(map["uri"] as? String == "\(base)/init.mp4")
        #expect(map["byteRange"] as? [String: Int] == ["offset": 0, "length": 800])
        #expect((map["keys"] as? [Any])?.isEmpty == true)
        // The date-time written on the last segment is counted back to the one before.
        #expect(segments[4]["programDateTime"] as? String == "2024-05-01T12:00:00.000Z")
        #expect(segments[3]["programDateTime"] as? String == "2024-05-01T11:59:54.000Z")
        #expect(written[3]["programDateTime"] == nil)
    }

    /// Date-times are written as `HLSDateTime.description` gives them: zones, fractions, years before 1970.
    @Test func dateTimesAreWrittenInTheirCanonicalForm() async throws {
        let written = [
            "2024-05-01T12:00:00.000Z", "2016-06-22T09:20:16.166-04:00", "1969-12-31T23:59:59.5+05:30",
            "2024-02-29T00:00:00.123456789Z", "0001-01-01T00:00:00Z", "2024-05-01T12:00:00.120", "9999-12-31T23:59:59Z",
        ]
        var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n"
        for (index, date) in written.enumerated() {
            playlist += "#EXT-X-PROGRAM-DATE-TIME:\(date)\n#EXTINF:4,\ns\(index).ts\n"
        }
        let directory = try TestRun.makeTemporaryDirectory("inspect-json")
        let object = try await inspect(try write(playlist + "#EXT-X-ENDLIST\n", name: "index.m3u8", in: directory))
        let expected = try written.map { try #require(HLSDateTime($0)).description }
        let segments = try #require((object["playlist"] as? [String: Any])?["segments"] as? [[String: Any]])
        let resolved = try #require((object["resolved"] as? [String: Any])?["segments"] as? [[String: Any]])
        #expect(segments.map { $0["programDateTime"] as? String } == expected)
        #expect(resolved.map { $0["programDateTime"] as? String } == expected)
        #expect(expected[1] == "2016-06-22T09:20:16.166-04:00" && expected[3] == "2024-02-29T00:00:00.123456789Z")
    }

    @Test func resolvesTheURIsOfAMultivariantPlaylist() async throws {
        let directory = try TestRun.makeTemporaryDirectory("inspect-json")
        let file = try write(
            """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="/keys/session.bin",IV=0x0000000000000000000000000000000A
            #EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="aud",CLOSED-CAPTIONS="cc"
            hi/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=200000,AUDIO="aud",CLOSED-CAPTIONS="cc"
            https://cdn.example.com/lo.m3u8?token=a
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="../iframe.m3u8"

            """, name: "master.m3u8", in: directory)
        let object = try await inspect(file)
        #expect(object["kind"] as? String == "multivariant")
        let playlist = try #require(object["playlist"] as? [String: Any])
        #expect((playlist["variants"] as? [[String: Any]])?.first?["uri"] as? String == "hi/index.m3u8")
        let resolved = try #require(object["resolved"] as? [String: Any])
        let base = "file://\(directory.path)"
        #expect(
            resolved["variants"] as? [[String: String]] == [
                ["uri": "\(base)/hi/index.m3u8"], ["uri": "https://cdn.example.com/lo.m3u8?token=a"],
            ])
        #expect(
            resolved["iFrameVariants"] as? [[String: String]] == [
                ["uri": "file://\(directory.deletingLastPathComponent().path)/iframe.m3u8"]
            ])
        #expect(resolved["renditions"] as? [[String: String]] == [["uri": "\(base)/audio/en.m3u8"], [:]])
        #expect(
            resolved["sessionKeys"] as? [[String: String]] == [
                [
                    "method": "AES-128", "uri": "file:///keys/session.bin", "keyFormat": "identity",
                    "iv": "0000000000000000000000000000000a", "ivSource": "explicit",
                ]
            ])
    }

    /// The `playlist` object is the model as its `Codable` conformance writes it, for every corpus playlist
    /// that parses, so nothing a script read before is gone.
    @Test func theWrittenModelIsWhatJSONEncoderGives() async throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("StreamKitHLSTests/Corpus")
        let files = try #require(FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "m3u8" }
        var compared = 0
        for file in files.sorted(by: { $0.path < $1.path }) {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard
                let parsed = try? Playlist.parse(bytes, options: PlaylistParseOptions(playlistURL: file)),
                let expected = try? expectedJSON(parsed.playlist)
            else { continue }
            let (code, output, _) = await CommandRunner.runCapturing(arguments: ["inspect", file.path, "--json"])
            #expect(code == .success, "\(file.lastPathComponent)")
            let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
            let playlist = try canonical(object?["playlist"] ?? [:])
            #expect(playlist == expected, "\(file.lastPathComponent)")
            compared += 1
        }
        #expect(compared >= 80)
    }

    private func expectedJSON(_ playlist: Playlist) throws -> String {
        let data =
            switch playlist {
            case .media(let media): try JSONEncoder().encode(media)
            case .multivariant(let multivariant): try JSONEncoder().encode(multivariant)
            }
        return try canonical(try JSONSerialization.jsonObject(with: data))
    }

    /// A parsed JSON value written again with sorted keys, to compare two documents whatever their member order.
    private func canonical(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }
}
