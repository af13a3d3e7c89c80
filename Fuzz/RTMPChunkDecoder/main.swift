// Fuzz the RTMP chunk stream decoder with the bytes a hostile server could send.
// Run: Fuzz/run.sh RTMPChunkDecoder -max_total_time=600
import StreamKitCore
import StreamKitRTMP

private let limits = ChunkDecoder.Limits(
    maximumChunkSize: 1 << 16, maximumMessageLength: 1 << 16, maximumChunkStreams: 8, maximumBufferedBytes: 1 << 18)

/// Messages decoded from `bytes` fed in pieces of `piece` bytes, and whether decoding failed.
private func decode(_ bytes: ArraySlice<UInt8>, piece: Int) -> ([RTMPMessage], Bool) {
    var decoder = ChunkDecoder(limits: limits)
    var buffer = ByteBuffer()
    var messages: [RTMPMessage] = []
    var offset = bytes.startIndex
    while offset < bytes.endIndex {
        let end = min(offset + piece, bytes.endIndex)
        buffer.writeBytes(bytes[offset..<end])
        offset = end
        do {
            while let message = try decoder.decode(&buffer) {
                precondition(message.payload.count <= limits.maximumMessageLength)
                messages.append(message)
            }
        } catch {
            precondition(error.kind == .protocolViolation)
            return (messages, true)
        }
        // Memory stays bounded whatever the input.
        precondition(decoder.bufferedBytes <= limits.maximumBufferedBytes)
        precondition(decoder.chunkStreamCount <= limits.maximumChunkStreams)
        precondition(decoder.chunkSize <= limits.maximumChunkSize)
        buffer.discardReadBytes()
    }
    return (messages, false)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))[...]
    guard let first = bytes.first else { return 0 }
    let input = bytes.dropFirst()
    // However the input is split, the same messages come out, and the same failure.
    let (whole, wholeFailed) = decode(input, piece: max(1, input.count))
    let (split, splitFailed) = decode(input, piece: Int(first % 17) + 1)
    precondition(whole == split && wholeFailed == splitFailed, "split decoding differs")

    // What was decoded encodes to chunks that decode to the same messages.
    let media = whole.filter { $0.type != .setChunkSize && $0.type != .abort }
    var encoder = ChunkEncoder()
    encoder.usesType3ForRepeatedDeltas = first & 1 == 1
    var encoded = ByteBuffer()
    for (index, message) in media.enumerated() {
        encoder.encode(message, chunkStreamID: UInt32(3 + index % 5), into: &encoded)
    }
    var decoder = ChunkDecoder(limits: limits)
    var again: [RTMPMessage] = []
    do {
        while let message = try decoder.decode(&encoded) { again.append(message) }
    } catch {
        preconditionFailure("re-encoded messages do not decode: \(error)")
    }
    precondition(again == media, "re-encoded messages differ")
    return 0
}
