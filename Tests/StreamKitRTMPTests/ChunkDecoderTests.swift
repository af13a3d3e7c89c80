import Foundation
import StreamKitCore
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// Hex to bytes, ignoring spaces; `*N:XX` repeats byte XX N times.
func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for word in text.split(separator: " ") {
        if word.hasPrefix("*") {
            let parts = word.dropFirst().split(separator: ":")
            bytes += [UInt8](repeating: UInt8(parts[1], radix: 16)!, count: Int(parts[0])!)
        } else {
            bytes += Hex.decode(word)!
        }
    }
    return bytes
}

/// Decodes `input` fed in pieces of the given sizes, collecting messages until an error.
func decodeMessages(
    _ input: [UInt8], pieces: [Int]? = nil, decoder: ChunkDecoder = ChunkDecoder()
) throws(RTMPError) -> [RTMPMessage] {
    var decoder = decoder
    var buffer = ByteBuffer()
    var messages: [RTMPMessage] = []
    var offset = 0
    for size in pieces ?? [input.count] where offset < input.count {
        buffer.writeBytes(input[offset..<min(offset + size, input.count)])
        offset += size
        while let message = try decoder.decode(&buffer) { messages.append(message) }
    }
    return messages
}

/// The chunk decoder against hand-built byte vectors (RTMP 1.0 §5.3), fed whole, byte by byte,
/// and one message per buffer.
@Suite struct ChunkDecoderTests {
    private func message(_ type: UInt8, stream: UInt32 = 1, _ timestamp: UInt32, _ payload: [UInt8]) -> RTMPMessage {
        RTMPMessage(
            type: RTMPMessageType(rawValue: type), streamID: stream, timestamp: RTMPTimestamp(timestamp),
            payload: payload)
    }

    /// One vector per header format on chunk stream 3, as in the specification's example 1:
    /// type 0 at 16, type 1 with delta 5, type 2 with delta 10, type 3 repeating delta 10.
    static let fourFormats = hexBytes(
        "03 000010 000005 14 01000000 0102030405  43 000005 000002 08 AABB  83 00000A CCDD  C3 EEFF")

    @Test func eachHeaderFormat() throws {
        let messages = try decodeMessages(Self.fourFormats)
        #expect(
            messages == [
                message(20, 16, [1, 2, 3, 4, 5]), message(8, 21, [0xAA, 0xBB]), message(8, 31, [0xCC, 0xDD]),
                message(8, 41, [0xEE, 0xFF]),
            ])
    }

    /// §5.3.1.2.4: a type-3 chunk starting a message right after a type-0 one repeats the type-0
    /// timestamp as its delta.
    @Test func typeThreeAfterTypeZeroUsesItsTimestampAsDelta() throws {
        let messages = try decodeMessages(hexBytes("04 000064 000001 09 00000000 01  C4 02"))
        #expect(messages.map(\.timestamp.rawValue) == [100, 200])
    }

    /// Basic headers of one, two and three bytes (§5.3.1.1): ids 2, 63, 64, 319, 320, 65599.
    @Test(arguments: [
        ("02", UInt32(2)), ("3F", 63), ("00 00", 64), ("00 FF", 319), ("01 00 01", 320), ("01 FF FF", 65_599),
    ])
    func basicHeaderSizes(_ header: String, _ chunkStreamID: UInt32) throws {
        let bytes = hexBytes(header + " 000007 000001 08 00000000 5A")
        #expect(try decodeMessages(bytes) == [message(8, stream: 0, 7, [0x5A])])
        // The encoder picks the same encoding.
        var encoder = ChunkEncoder()
        var buffer = ByteBuffer()
        encoder.encode(message(8, stream: 0, 7, [0x5A]), chunkStreamID: chunkStreamID, into: &buffer)
        #expect(Array(buffer.readableBytesView) == bytes)
    }

    /// A timestamp of exactly 0xFFFFFF must itself go in the Extended Timestamp field (§5.3.1.3).
    @Test func timestampFFFFFFIsExtended() throws {
        let bytes = hexBytes("03 FFFFFF 000001 08 00000000 00FFFFFF AA")
        #expect(try decodeMessages(bytes) == [message(8, stream: 0, 0xFF_FFFF, [0xAA])])
        var encoder = ChunkEncoder()
        var buffer = ByteBuffer()
        encoder.encode(message(8, stream: 0, 0xFF_FFFF, [0xAA]), chunkStreamID: 3, into: &buffer)
        #expect(Array(buffer.readableBytesView) == bytes)
    }

    /// A 200-byte message at 16,777,216 ms in 128-byte chunks: the type-3 continuation repeats
    /// the Extended Timestamp, because the flag is kept per chunk stream.
    static let extendedContinuation = hexBytes("03 FFFFFF 0000C8 09 00000000 01000000 *128:11 C3 01000000 *72:22")

    @Test func extendedTimestampOnContinuationChunks() throws {
        let expected = message(
            9, stream: 0, 0x0100_0000, [UInt8](repeating: 0x11, count: 128) + [UInt8](repeating: 0x22, count: 72))
        #expect(try decodeMessages(Self.extendedContinuation) == [expected])
        for size in [1, 5, 129] {
            #expect(
                try decodeMessages(Self.extendedContinuation, pieces: Array(repeating: size, count: 300)) == [expected])
        }
        var encoder = ChunkEncoder()
        var buffer = ByteBuffer()
        encoder.encode(expected, chunkStreamID: 3, into: &buffer)
        #expect(Array(buffer.readableBytesView) == Self.extendedContinuation)

        // Some senders leave the field out of continuation chunks; the data is still read right.
        let omitted = hexBytes("03 FFFFFF 0000C8 09 00000000 01000000 *128:11 C3 *72:22")
        #expect(try decodeMessages(omitted) == [expected])
    }

    /// Extended deltas on type-1 headers, and type-3 chunks starting messages that repeat them.
    @Test func extendedDeltas() throws {
        let bytes = hexBytes("05 000064 000001 08 00000000 01  45 FFFFFF 000001 08 01000000 02  C5 01000000 03")
        let messages = try decodeMessages(bytes)
        #expect(messages.map(\.timestamp.rawValue) == [100, 100 + 0x0100_0000, 100 + 0x0200_0000])
        #expect(messages.map(\.payload) == [[1], [2], [3]])
    }

    /// Deltas wrap modulo 2^32.
    @Test func timestampsWrap() throws {
        let bytes = hexBytes("06 FFFFFF 000001 08 00000000 FFFFFFF0 01  86 000020 02")
        #expect(try decodeMessages(bytes).map(\.timestamp.rawValue) == [0xFFFF_FFF0, 0x10])
    }

    /// Set Chunk Size applies from the very next chunk, even in the middle of another message.
    @Test func chunkSizeChangesMidMessage() throws {
        let bytes = hexBytes(
            "04 000000 00012C 09 01000000 *128:AA  02 000000 000004 01 00000000 00000064  C4 *100:BB  C4 *72:CC")
        let messages = try decodeMessages(bytes)
        #expect(messages.count == 2)
        #expect(messages[0] == RTMPMessage(type: .setChunkSize, payload: [0, 0, 0, 100]))
        #expect(
            messages[1].payload
                == [UInt8](repeating: 0xAA, count: 128) + [UInt8](repeating: 0xBB, count: 100)
                + [UInt8](repeating: 0xCC, count: 72))
        var decoder = ChunkDecoder()
        var buffer = ByteBuffer(bytes: bytes)
        while try decoder.decode(&buffer) != nil {}
        #expect(decoder.chunkSize == 100 && decoder.bufferedBytes == 0)
    }

    /// Abort drops the partial message; the chunk stream starts over with a type-0 header.
    @Test func abortDropsThePartialMessage() throws {
        let bytes = hexBytes(
            "05 000000 0000C8 09 01000000 *128:AA  02 000000 000004 02 00000000 00000005  05 000009 000002 08 01000000 5152"
        )
        let messages = try decodeMessages(bytes)
        #expect(messages.count == 2 && messages[0].type == .abort)
        #expect(messages[1] == message(8, 9, [0x51, 0x52]))
    }

    /// The same messages however the input is split: whole, a byte at a time, one message per
    /// buffer, and random pieces (``DecoderVerifier``); an error too is the same at any split.
    @Test func sameMessagesHoweverTheInputIsSplit() throws {
        let streams = [Self.fourFormats, Self.extendedContinuation, hexBytes("01 00 01 000001 000000 09 02000000")]
        let input = Array(streams.joined())
        let perMessage = [17, 10, 6, 3, Self.extendedContinuation.count, 14]
        #expect(perMessage.reduce(0, +) == input.count)
        let whole = DecoderVerifier.verify(input, splits: [perMessage]) { pieces in
            Self.decodeOutcome(pieces)
        }
        #expect(whole.values.count == 6 && whole.error == nil)
        #expect(whole.values == (try decodeMessages(input)))
        let hostile = input + hexBytes("03 000000 000001 2A 00000000 00")
        let refused = DecoderVerifier.verify(hostile) { Self.decodeOutcome($0) }
        #expect(refused.values == whole.values && refused.error?.contains("unknown message type 42") == true)
    }

    /// Messages decoded from the pieces in order, and the error that stopped the decoder.
    private static func decodeOutcome(_ pieces: [ArraySlice<UInt8>]) -> DecoderOutcome<RTMPMessage> {
        var decoder = ChunkDecoder()
        var buffer = ByteBuffer()
        return DecoderOutcome.collecting { messages in
            for piece in pieces {
                buffer.writeBytes(piece)
                while let message = try decoder.decode(&buffer) { messages.append(message) }
            }
        }
    }

    // MARK: Hostile input

    @Test(arguments: [
        ("02 000000 000004 01 00000000 00000000", "chunk size to 0"),
        ("02 000000 000004 01 00000000 80000000", "chunk size to 2147483648"),
        ("02 000000 000004 01 00000000 01000001", "above the 16777216-byte limit"),
        ("02 000000 000002 01 00000000 0001", "Set Chunk Size with a 2-byte payload"),
        ("03 000000 FFFFFF 09 00000000", "16777215 bytes"),
        ("03 000000 000001 2A 00000000 00", "unknown message type 42"),
        ("43 000000 000001 08 00", "starts with a type-1 header"),
        ("03 000000 0000C8 09 00000000 *128:00 43 000000 000001 08 00", "interrupts a message"),
    ])
    func rejectsHostileHeaders(_ hex: String, _ expected: String) {
        do {
            _ = try decodeMessages(hexBytes(hex))
            Issue.record("decoded \(hex)")
        } catch {
            #expect(error.kind == .protocolViolation)
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    /// Memory stays bounded: a cap on chunk streams and on bytes held in partial messages.
    @Test func limitsBoundMemory() throws {
        let limits = ChunkDecoder.Limits(
            maximumChunkSize: 1 << 20, maximumMessageLength: 1 << 20, maximumChunkStreams: 3, maximumBufferedBytes: 300)
        let streams = hexBytes(
            "03 000000 000001 08 00000000 00  04 000000 000001 08 00000000 00  05 000000 000001 08 00000000 00")
        #expect(try decodeMessages(streams, decoder: ChunkDecoder(limits: limits)).count == 3)
        #expect(throws: RTMPError.protocolViolation("")) {
            try decodeMessages(
                streams + hexBytes("06 000000 000001 08 00000000 00"), decoder: ChunkDecoder(limits: limits))
        }
        let partials = hexBytes(
            "03 000000 000200 09 00000000 *128:00  04 000000 000200 09 00000000 *128:00  05 000000 000200 09 00000000 *128:00"
        )
        do {
            _ = try decodeMessages(partials, decoder: ChunkDecoder(limits: limits))
            Issue.record("held more than 300 bytes")
        } catch {
            #expect(error.description.contains("more than 300 bytes"))
        }
    }
}
