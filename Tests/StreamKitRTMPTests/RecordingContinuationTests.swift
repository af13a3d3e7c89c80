import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// A recording continued by a new process (a queue task after `queue run` was killed): the FLV
/// file is appended to after its last whole tag, and the HLS playlist goes on after a
/// discontinuity, keeping its segments.
@Suite struct RecordingContinuationTests {
    static func frame(at time: UInt32, key: Bool) -> FLVTag { RTMPToHLSTests.frame(at: time, key: key) }

    /// Every tag of the FLV file at `path`.
    static func tags(_ path: String) throws -> [FLVTag] {
        let reader = try FLVFileReader(path: path)
        var tags: [FLVTag] = []
        while let tag = try reader.next() { tags.append(tag) }
        return tags
    }

    @Test func aTornFileIsCutAtItsLastWholeTagAndContinued() throws {
        let path = try TestRun.makeTemporaryDirectory("flv-continue").appendingPathComponent("show.flv").path
        let first = try FLVFileWriter(path: path)
        try first.writeMetadata(["width": .number(320)])
        for index in 0..<10 { try first.write(Self.frame(at: UInt32(index * 40), key: index == 0)) }
        try first.flush()
        // A kill in the middle of a tag: its header and part of its data reached the disk.
        var torn = ByteBuffer()
        FLVTag.writeHeader(type: .video, dataSize: 100, timestamp: 400, into: &torn)
        torn.writeBytes([0x17, 1, 0, 0])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(torn.readableBytesView))
        try handle.close()

        let continued = try #require(try FLVFileWriter(continuing: path))
        #expect(continued.continuation?.lastTimestamp == 360 && continued.continuation?.mediaEnd == 400)
        var machine = RecordingStateMachine(durationLimit: 1_000, continuingAfter: 360, mediaEnd: 400)
        #expect(machine.hasStarted && machine.duration == 0.36)
        for tag in [Self.frame(at: 5_000, key: true), Self.frame(at: 5_040, key: false)] {
            let message = RTMPMessage(
                type: .video, streamID: 1, timestamp: RTMPTimestamp(tag.timestamp), payload: tag.data)
            for case .writeTag(let written) in machine.receive(message) { try continued.write(written) }
        }
        try continued.finish(duration: machine.duration)

        let tags = try Self.tags(path)
        #expect(tags.first?.type == .scriptData && tags.count == 13, "\(tags.map(\.timestamp))")
        #expect(tags.dropFirst().map(\.timestamp) == (0..<10).map { UInt32($0 * 40) } + [400, 440])
        let metadata = try #require(try FLVScriptData(data: tags[0].data).properties)
        #expect(metadata["duration"] == .number(0.44))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64)
        #expect(metadata["filesize"] == .number(Double(size)))
    }

    @Test func aFileWithNoMediaIsNotContinued() throws {
        let folder = try TestRun.makeTemporaryDirectory("flv-continue-empty")
        #expect(try FLVFileWriter(continuing: folder.appendingPathComponent("none.flv").path) == nil)
        let path = folder.appendingPathComponent("empty.flv").path
        let empty = try FLVFileWriter(path: path)
        try empty.writeMetadata([:])
        try empty.finish(duration: 0)
        #expect(try FLVFileWriter(continuing: path) == nil)
    }

    @Test func theHLSPlaylistKeepsItsSegmentsAndGoesOnAfterADiscontinuity() throws {
        let directory = try TestRun.makeTemporaryDirectory("hls-continue").appendingPathComponent("video").path
        let first = try RTMPToHLS(directory: directory, segmentDuration: .seconds(1))
        try first.write(FLVTag(type: .video, timestamp: 0, data: RTMPToHLSTests.avcConfiguration))
        for index in 0..<35 { try first.write(Self.frame(at: UInt32(index * 40), key: index % 10 == 0)) }
        // Killed here: segment 00001.ts is open, and unlisted.
        #expect(first.segmentCount == 1)

        let next = try RTMPToHLS(directory: directory, segmentDuration: .seconds(1), continuing: true)
        #expect(next.segmentCount == 1)
        try next.write(FLVTag(type: .video, timestamp: 1_400, data: RTMPToHLSTests.avcConfiguration))
        for index in 0..<35 { try next.write(Self.frame(at: UInt32(1_400 + index * 40), key: index % 10 == 0)) }
        try next.finish()
        let text = try RTMPToHLSTests.read(directory + "/" + RTMPToHLS.playlistName)
        #expect(text.contains("#EXTINF:1.2,\n00000.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:"), "\(text)")
        #expect(text.hasSuffix("00002.ts\n#EXT-X-ENDLIST\n") && next.segmentCount == 3, "\(text)")
        #expect(text.components(separatedBy: "#EXT-X-TARGETDURATION:").count == 2)
    }
}
