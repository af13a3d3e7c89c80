import StreamKitCore
import StreamKitRTMP
import StreamKitTestSupport
import Testing

@Suite(.background) struct ChunkEncoderTests {
    /// The header format of each first chunk, read back from the bytes.
    private func formats(_ messages: [RTMPMessage], type3: Bool = false) -> [UInt8] {
        var encoder = ChunkEncoder()
        encoder.usesType3ForRepeatedDeltas = type3
        return messages.map { message in
            var buffer = ByteBuffer()
            encoder.encode(message, chunkStreamID: 4, into: &buffer)
            return buffer.getByte(at: 0)! >> 6
        }
    }

    private func audio(_ timestamp: UInt32, length: Int = 2, stream: UInt32 = 1) -> RTMPMessage {
        RTMPMessage(
            type: .audio, streamID: stream, timestamp: RTMPTimestamp(timestamp),
            payload: Array(repeating: 7, count: length))
    }

    @Test func smallestHeaderThatFits() {
        // New chunk stream: 0. Same length and type: 2. Other length: 1. Backwards: 0. Other stream: 0.
        #expect(
            formats([audio(0), audio(23), audio(46, length: 3), audio(40, length: 3), audio(50, length: 3, stream: 2)])
                == [0, 2, 1, 0, 0])
        // Repeated deltas use type 3 only when asked (nginx-rtmp reads it as "same timestamp").
        #expect(formats([audio(0), audio(20), audio(40), audio(60)]) == [0, 2, 2, 2])
        #expect(formats([audio(0), audio(20), audio(40), audio(60)], type3: true) == [0, 2, 3, 3])
    }

    /// A wrap past 2^32 is forward in serial arithmetic, so a delta still fits.
    @Test func deltasAcrossTheWrap() throws {
        let messages = [audio(0xFFFF_FFF0), audio(0x10)]
        #expect(formats(messages) == [0, 2])
        var encoder = ChunkEncoder()
        var buffer = ByteBuffer()
        for message in messages { encoder.encode(message, chunkStreamID: 4, into: &buffer) }
        #expect(try decodeMessages(Array(buffer.readableBytesView)) == messages)
    }

    /// Random messages on random chunk streams, at random chunk sizes, decode to themselves,
    /// with and without type-3 headers for new messages.
    @Test(arguments: [false, true])
    func randomMessagesRoundTrip(type3: Bool) throws {
        var random = SplitMix64(seed: type3 ? 7 : 3)
        for _ in 0..<20 {
            let chunkSize = [1, 7, 128, 4_096, 65_536].randomElement(using: &random)!
            var encoder = ChunkEncoder()
            encoder.usesType3ForRepeatedDeltas = type3
            var decoder = ChunkDecoder()
            var buffer = ByteBuffer()
            // Announce the chunk size the way a peer does, then switch.
            encoder.encode(
                RTMPMessage(
                    type: .setChunkSize,
                    payload: [
                        UInt8(chunkSize >> 24), UInt8(chunkSize >> 16 & 0xFF), UInt8(chunkSize >> 8 & 0xFF),
                        UInt8(chunkSize & 0xFF),
                    ]),
                chunkStreamID: 2, into: &buffer)
            encoder.setChunkSize(chunkSize)
            var expected: [RTMPMessage] = []
            var clocks: [UInt32: UInt32] = [:]
            for _ in 0..<40 {
                let chunkStream = [3, 4, 63, 64, 319, 320, 65_599].randomElement(using: &random)! as UInt32
                let step = [0, 20, 23, 40, 0x00FF_FFFF, 0x0100_0000].randomElement(using: &random)! as UInt32
                let timestamp = (clocks[chunkStream] ?? UInt32.random(in: 0...UInt32.max, using: &random)) &+ step
                clocks[chunkStream] = timestamp
                let length = [0, 1, 2, 200, 5_000].randomElement(using: &random)!
                let message = RTMPMessage(
                    type: [.audio, .video, .amf0Data].randomElement(using: &random)!,
                    streamID: UInt32.random(in: 1...2, using: &random),
                    timestamp: RTMPTimestamp(timestamp),
                    payload: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
                encoder.encode(message, chunkStreamID: chunkStream, into: &buffer)
                expected.append(message)
            }
            var decoded: [RTMPMessage] = []
            while let message = try decoder.decode(&buffer) { decoded.append(message) }
            #expect(decoded.first?.type == .setChunkSize)
            #expect(Array(decoded.dropFirst()) == expected, "chunk size \(chunkSize)")
            #expect(decoder.chunkSize == chunkSize && buffer.readableBytes == 0)
        }
    }
}
