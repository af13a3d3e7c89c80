// Fuzz the SAMPLE-AES MPEG-TS decryptor with packets behind a program map of encrypted streams.
// Run: Fuzz/run.sh SampleAESTransportStream -max_total_time=600 -max_len=8000
import StreamKitMPEGTS

/// PAT and a PMT listing H.264 (0xDB, PID 0x100), AAC (0xCF, 0x101) and AC-3 (0xC1, 0x102).
private let tables: [UInt8] = {
    var writer = TSPacketWriter()
    var output: [UInt8] = []
    writer.writeSection(ProgramTables.associationSection(), pid: 0, into: &output)
    let streams = [(0xDB, 0x100), (0xCF, 0x101), (0xC1, 0x102)].map {
        TSElementaryStream(type: TSStreamType(rawValue: UInt8($0.0)), pid: UInt16($0.1))
    }
    writer.writeSection(
        ProgramTables.mapSection(streams: streams, pcrPID: 0x100), pid: ProgramTables.pmtPID, into: &output)
    return output
}()

private let key: [UInt8] = Array(0..<16)
private let iv: [UInt8] = Array(16..<32)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    // The raw bytes as they come (mostly not a transport stream).
    _ = try? SampleAESTransportStream.decrypt(bytes, key: key, iv: iv)

    // The bytes as packets of the encrypted program: sync bytes forced, PIDs folded onto the
    // program's (so that PES packets of every kind are built from the input).
    var packets = Array(bytes.prefix(bytes.count - bytes.count % 188))
    for offset in stride(from: 0, to: packets.count, by: 188) {
        packets[offset] = 0x47
        packets[offset + 1] = packets[offset + 1] & 0xE0 | 0x01
        packets[offset + 2] = packets[offset + 2] % 3
    }
    let segment = (bytes.first ?? 0) & 1 == 0 ? tables + packets : packets
    guard let clear = try? SampleAESTransportStream.decrypt(segment, key: key, iv: iv) else { return 0 }
    precondition(clear.count % 188 == 0, "the output is not whole packets")
    precondition(stride(from: 0, to: clear.count, by: 188).allSatisfy { clear[$0] == 0x47 }, "a packet lost its sync")
    // The output's program map names clear streams: decrypting it again changes nothing.
    precondition((try? SampleAESTransportStream.decrypt(clear, key: key, iv: iv)) == clear, "not idempotent")
    return 0
}
