import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitFLV
import StreamKitTestSupport
import Testing

@Suite struct FLVTests {
    private static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex.replacingOccurrences(of: " ", with: ""))! }

    /// A small file: header, onMetaData, an AVC sequence header, a keyframe with a timestamp past 24 bits.
    private static func sampleFile() -> ([UInt8], [FLVTag]) {
        let tags = [
            FLVTag(type: .scriptData, timestamp: 0, data: FLVScriptData.metadata(["duration": 2]).data),
            FLVTag(type: .video, timestamp: 0, data: [0x17, 0x00, 0, 0, 0, 1, 0x64]),
            FLVTag(type: .video, timestamp: 0x0123_4567, data: [0x17, 0x01, 0, 0, 0, 0xAA]),
        ]
        var buffer = ByteBuffer()
        FLVHeader(hasAudio: false, hasVideo: true).write(into: &buffer)
        buffer.writeInteger(UInt32(0))
        for tag in tags { tag.write(into: &buffer) }
        return (Array(buffer.readableBytesView), tags)
    }

    @Test func headerAndTagBytesAreExact() {
        var buffer = ByteBuffer()
        FLVHeader(hasAudio: true, hasVideo: true).write(into: &buffer)
        #expect(Array(buffer.readableBytesView) == Self.bytes("464C56 01 05 00000009"))
        var tag = ByteBuffer()
        FLVTag(type: .audio, timestamp: 0x0A0B_0C0D, data: [0xAF, 0x01]).write(into: &tag)
        // Type, size, timestamp low 24 bits, extended upper 8 bits, stream id, data, PreviousTagSize 13.
        #expect(Array(tag.readableBytesView) == Self.bytes("08 000002 0B0C0D 0A 000000 AF01 0000000D"))
    }

    /// The reader gives the same tags however the file arrives: whole, a byte at a time, in
    /// 7-byte pieces and in random pieces, and ends each time at a tag boundary with nothing left.
    @Test func readsAllAtOnceAndDripFed() throws {
        let (file, tags) = Self.sampleFile()
        struct Read: Equatable {
            var items: DecoderOutcome<FLVReader.Item>
            var endsAtBoundary: Bool
            var mismatchedPreviousTagSizes: Int
        }
        let read = DecoderVerifier.verify(file, splits: [[7]]) { pieces in
            var reader = FLVReader()
            var buffer = ByteBuffer()
            let items = DecoderOutcome<FLVReader.Item>.collecting { items in
                for piece in pieces {
                    buffer.writeBytes(piece)
                    while let item = try reader.read(from: &buffer) { items.append(item) }
                }
            }
            return Read(
                items: items, endsAtBoundary: reader.isAtTagBoundary && buffer.readableBytes == 0,
                mismatchedPreviousTagSizes: reader.mismatchedPreviousTagSizes)
        }
        #expect(
            read.items
                == DecoderOutcome(values: [.header(FLVHeader(hasAudio: false, hasVideo: true))] + tags.map { .tag($0) })
        )
        #expect(read.endsAtBoundary)
        #expect(read.mismatchedPreviousTagSizes == 0)
    }

    @Test func badInputFailsEarly() throws {
        var notFLV = ByteBuffer(bytes: Array("FLX".utf8))
        var reader = FLVReader()
        #expect(throws: FLVError.notFLV()) { try reader.read(from: &notFLV) }

        var encrypted = ByteBuffer(bytes: Self.bytes("464C56 01 05 00000009 00000000 28 000001 000000 00 000000 00"))
        reader = FLVReader()
        _ = try reader.read(from: &encrypted)
        #expect(throws: FLVError.encrypted(offset: 13)) { try reader.read(from: &encrypted) }

        var unknown = ByteBuffer(bytes: Self.bytes("464C56 01 05 00000009 00000000 07 000001 000000 00 000000 00"))
        reader = FLVReader()
        _ = try reader.read(from: &unknown)
        #expect(throws: FLVError.badTag("", offset: 13)) { try reader.read(from: &unknown) }
    }

    @Test func wrongPreviousTagSizesAreCountedNotFatal() throws {
        var (file, _) = Self.sampleFile()
        file[9 + 4 + 11 + FLVScriptData.metadata(["duration": 2]).data.count + 3] ^= 0xFF
        var reader = FLVReader()
        var buffer = ByteBuffer(bytes: file)
        var count = 0
        while let item = try reader.read(from: &buffer) { if case .tag = item { count += 1 } }
        #expect(count == 3 && reader.mismatchedPreviousTagSizes == 1)
    }

    /// Legacy AVC and AAC headers, and Enhanced RTMP FourCC headers (hvc1, av01, vp09).
    @Test func mediaHeaders() throws {
        let avcSequence = try #require(FLVVideoTagHeader(data: [0x17, 0x00, 0, 0, 0]))
        #expect(avcSequence.isSequenceHeader && avcSequence.isKeyframe && avcSequence.codec == .legacy(codecID: 7))
        let avcInter = try #require(FLVVideoTagHeader(data: [0x27, 0x01, 0, 0, 0]))
        #expect(!avcInter.isSequenceHeader && !avcInter.isKeyframe)

        // Enhanced: IsExHeader | FrameType << 4 | PacketType, then the FourCC.
        for fourCC in [FourCC.hevc, .av1, .vp9] {
            let code = Array(fourCC.description.utf8)
            let start = try #require(FLVVideoTagHeader(data: [0x90] + code + [1, 2, 3]))
            #expect(start.codec == .enhanced(fourCC) && start.isSequenceHeader && start.isKeyframe)
            let frames = try #require(FLVVideoTagHeader(data: [0xA1] + code + [0, 0, 0, 9]))
            #expect(
                frames.codec == .enhanced(fourCC) && !frames.isSequenceHeader && !frames.isKeyframe
                    && frames.packetType == 1)
            let framesX = try #require(FLVVideoTagHeader(data: [0x93] + code + [9]))
            #expect(framesX.isKeyframe && framesX.packetType == 3)
        }
        #expect(FourCC("hvc1").rawValue == 0x6876_6331)
        let multitrack = try #require(FLVVideoTagHeader(data: [0x96, 0x00]))
        #expect(multitrack.codec == .enhancedOther(packetType: 6) && !multitrack.isSequenceHeader)
        #expect(FLVVideoTagHeader(data: [0x90, 0x68]) == nil)

        let aacSequence = try #require(FLVAudioTagHeader(data: [0xAF, 0x00, 0x12, 0x10]))
        #expect(aacSequence.isSequenceHeader)
        #expect(FLVAudioTagHeader(data: [0xAF, 0x01, 0x21])?.isSequenceHeader == false)
        let opus = try #require(FLVAudioTagHeader(data: [0x90] + Array("Opus".utf8)))
        #expect(opus.isSequenceHeader && opus.fourCC?.description == "Opus")
        #expect(FLVAudioTagHeader(data: [0x2F, 0x00])?.packetType == nil)
    }

    @Test func scriptDataDropsSetDataFrame() throws {
        let metadata = FLVScriptData.metadata(["width": 320, "videocodecid": 7])
        #expect(try FLVScriptData(data: metadata.data) == metadata)
        #expect(try FLVScriptData(data: metadata.setDataFrameData) == metadata)
        #expect(metadata.properties?["width"] == 320)
        #expect(throws: AMFError.malformed("", offset: 0)) { try FLVScriptData(data: AMF0Encoder.encode([1])) }
    }

    /// The FLV fixture from ffmpeg reads to the end: metadata first, sequence headers, then frames.
    @Test(.requires(.ffmpeg))
    func readsAnFFmpegFile() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: 2))
        var reader = FLVReader()
        var buffer = ByteBuffer(bytes: try Data(contentsOf: fixture.entryFile))
        var tags: [FLVTag] = []
        while let item = try reader.read(from: &buffer) { if case .tag(let tag) = item { tags.append(tag) } }
        #expect(buffer.readableBytes == 0 && reader.mismatchedPreviousTagSizes == 0)
        #expect(try FLVScriptData(data: tags[0].data).name == "onMetaData")
        let videoFrames = tags.filter { $0.type == .video && FLVVideoTagHeader(data: $0.data)?.packetType == 1 }
        #expect(videoFrames.count == 50)
        #expect(tags.contains { $0.type == .audio && FLVAudioTagHeader(data: $0.data)?.isSequenceHeader == true })
    }
}
