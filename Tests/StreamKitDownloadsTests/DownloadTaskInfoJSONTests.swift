import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// `queue list --json` writes tasks member by member (``DownloadTaskInfo/writeJSON(to:)``); these
/// hold it to the `Codable` form, byte for byte, so that neither drifts from the other.
struct DownloadTaskInfoJSONTests {
    static let bare = DownloadTaskInfo(
        id: "00000000000000a1", queueID: 1, url: "http://127.0.0.1:9/a.ts", kind: .file, selection: nil,
        decrypt: false, fileType: .video, title: "a.ts", thumbnailURL: nil, state: .stopped, progress: 0,
        bytesDone: 0, bytesExpected: nil, bytesPerSecond: 0, postProcessingProgress: 0, lastError: nil,
        createdAt: Date(timeIntervalSince1970: 1_796_231_444.75), finishedAt: nil, location: "/l/00000000000000a1/a.ts",
        connections: 4, headers: [])

    /// Every optional member set, strings that need escaping, fractions of seconds.
    static let full = DownloadTaskInfo(
        id: "00000000000000b2", queueID: 9_007_199_254_740_993, url: "https://h/b/master.m3u8?t=\"1\"&u=/x",
        kind: .rtmp,
        selection: HLSSelection(
            variant: .best, audio: .automatic, subtitles: .all, codecs: ["avc1"], sections: [],
            excludedSegments: ["ad-\\d+\\.ts"]),
        decrypt: true, fileType: .audio, title: "Ünïcode \u{1F3A5} \"quoted\"\n\ttab", thumbnailURL: "https://h/c.jpg",
        state: .failed, progress: 0.123_456_789, bytesDone: 1 << 40, bytesExpected: (1 << 41) + 3,
        bytesPerSecond: 1_234_567.891, postProcessingProgress: 1, lastError: "HTTP 503 from https://h/b/1.ts\u{1}",
        createdAt: Date(timeIntervalSince1970: -1.5), finishedAt: Date(timeIntervalSince1970: 4_107_542_400.999),
        location: "/home/u/Videos/b", connections: 16, headers: ["Referer: https://h/", "Cookie: <hidden>"],
        exportPath: "/home/u/b.mp4", recording: LiveRecordingSettings(duration: 5_400, idleTimeout: 7.5, hls: true),
        recordedSeconds: 61.25, subtitleFormat: .srt)

    static func encoded(_ task: DownloadTaskInfo) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(task), as: UTF8.self)
    }

    @Test(arguments: [bare, full])
    func writesTheBytesJSONEncoderWritesOfTheCodableForm(task: DownloadTaskInfo) throws {
        let ours = String(decoding: JSONWriter.bytes { task.writeJSON(to: &$0) }, as: UTF8.self)
        #expect(ours == (try Self.encoded(task)))
        // Through `Encodable` with the same options: the same bytes again.
        let streamed = JSONWriter.bytes { writer in try? writer.encode(task, options: DownloadTaskInfo.jsonOptions) }
        #expect(String(decoding: streamed, as: UTF8.self) == ours)
    }

    /// A member added to the type and not to ``DownloadTaskInfo/writeJSON(to:)`` fails here: the
    /// full task sets every stored property, and its object must have one member for each.
    @Test func theFullTaskSetsEveryStoredProperty() throws {
        let properties = Mirror(reflecting: Self.full).children.count
        let object = try JSONSerialization.jsonObject(with: Data(try Self.encoded(Self.full).utf8)) as? [String: Any]
        #expect(object?.count == properties)
        let ours = try JSONSerialization.jsonObject(with: Data(JSONWriter.bytes { Self.full.writeJSON(to: &$0) }))
        #expect((ours as? [String: Any])?.count == properties)
    }

    @Test func writesJSONLinesWithoutCommasBetweenThem() {
        let chunks = Chunks()
        var writer = JSONWriter(chunkSize: 64) { chunks.list.append($0) }
        for task in [Self.bare, Self.full, Self.bare] {
            task.writeJSON(to: &writer)
            writer.lineBreak()
        }
        writer.flush()
        let lines = String(decoding: chunks.list.joined(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix(#"{"bytesDone":"#) && $0.hasSuffix("}") })
    }

    private final class Chunks: @unchecked Sendable {
        var list: [[UInt8]] = []
    }
}
