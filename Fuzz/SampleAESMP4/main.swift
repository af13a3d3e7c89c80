// Fuzz the fMP4 `cbcs` (SAMPLE-AES) reader: init segments and media segments from any bytes.
// Run: Fuzz/run.sh SampleAESMP4 -max_total_time=600 -max_len=4000
import StreamKitCore
import StreamKitMPEGTS

private let key: [UInt8] = Array(0..<16)
private let iv: [UInt8] = Array(16..<32)

/// Track 1 video (1:9, constant IV), track 2 audio (whole samples), track 3 with per-sample IVs.
private let protection = MP4Protection(
    tracks: [
        1: .init(trackID: 1, originalFormat: MP4Box.type("avc1"), cryptByteBlock: 1, skipByteBlock: 9, constantIV: iv),
        2: .init(trackID: 2, originalFormat: MP4Box.type("mp4a"), cryptByteBlock: 1, skipByteBlock: 0, constantIV: iv),
        3: .init(
            trackID: 3, originalFormat: MP4Box.type("avc1"), perSampleIVSize: 8, cryptByteBlock: 1, skipByteBlock: 9,
            constantIV: nil),
    ], defaultSampleSizes: [2: 17])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    // As an init segment: what parses rewrites to a clear init of the same boxes, nothing protected.
    if (try? MP4Protection.parse(initSegment: bytes)) != nil, let clear = try? MP4Protection.clearInitSegment(bytes) {
        precondition(clear.count == bytes.count, "the clear init changed size")
        let before = (try? MP4Box.boxes(in: bytes, 0..<bytes.count))?.map(\.end)
        precondition((try? MP4Box.boxes(in: clear, 0..<clear.count))?.map(\.end) == before, "the boxes moved")
        precondition((try? MP4Protection.parse(initSegment: clear))?.tracks.isEmpty ?? true, "still protected")
    }
    // As a media segment: what decrypts keeps its size and its boxes' places.
    if let clear = try? protection.decryptSegment(bytes, key: key, iv: iv) {
        precondition(clear.count == bytes.count, "the segment changed size")
        let before = (try? MP4Box.boxes(in: bytes, 0..<bytes.count))?.map(\.end)
        precondition((try? MP4Box.boxes(in: clear, 0..<clear.count))?.map(\.end) == before, "the boxes moved")
    }
    return 0
}
