import StreamKitCore
import StreamKitMPEGTS
import Testing

/// The MPEG-TS building blocks against bytes worked out from ISO/IEC 13818-1 and checked
/// against what ffmpeg's muxer writes for the same program.
@Suite struct TransportStreamTests {
    @Test func crcOfTheCheckString() {
        #expect(CRC32MPEG2.checksum(Array("123456789".utf8)) == 0x0376_E6E7)
    }

    @Test func programAssociationTable() {
        let section = ProgramTables.associationSection()
        #expect(section == Hex.decode("00b00d0001c100000001f0002ab104b2"))
        #expect(CRC32MPEG2.checksum(section) == 0, "a section with its CRC_32 checks to zero")
    }

    @Test func programMapTable() {
        let streams = [TSElementaryStream(type: .h264, pid: 0x100), TSElementaryStream(type: .aacADTS, pid: 0x101)]
        let section = ProgramTables.mapSection(streams: streams, pcrPID: 0x100)
        #expect(section == Hex.decode("02b0170001c10000e100f0001be100f0000fe101f0002f44b99b"))
        let hevc = ProgramTables.mapSection(
            streams: [TSElementaryStream(type: .hevc, pid: 0x100)], pcrPID: 0x100, version: 3)
        #expect(hevc[5] == 0xC1 | 3 << 1)
        #expect(hevc[12] == 0x24)
        #expect(CRC32MPEG2.checksum(hevc) == 0)
    }

    @Test func pesHeaderWithPresentationAndDecodingTime() {
        var bytes: [UInt8] = []
        PESHeader(streamID: PESHeader.videoStreamID, presentationTime: 126_000, decodingTime: 122_400, payloadLength: 0)
            .write(into: &bytes)
        #expect(bytes == Hex.decode("000001e0000084c00a310007d861110007bc41"))
    }

    @Test func pesHeaderWithPresentationTimeOnly() {
        var bytes: [UInt8] = []
        let header = PESHeader(
            streamID: PESHeader.audioStreamID, presentationTime: 126_000, decodingTime: 126_000, payloadLength: 100)
        header.write(into: &bytes)
        #expect(bytes == Hex.decode("000001c0006c848005210007d861"))
        #expect(header.size == bytes.count)
    }

    @Test func continuityCounterWrapsAfterFifteen() {
        var writer = TSPacketWriter()
        var output: [UInt8] = []
        for _ in 0..<17 { writer.writeSection(ProgramTables.associationSection(), pid: 0, into: &output) }
        writer.writeSection(ProgramTables.associationSection(), pid: 0x1000, into: &output)
        let counters = stride(from: 0, to: output.count, by: 188).map { output[$0 + 3] & 0x0F }
        #expect(counters == Array(0...15) + [0, 0])
        #expect(writer.nextContinuityCounter(pid: 0) == 1)
    }

    /// Every payload length, including those that leave 1 or 2 bytes for stuffing, comes back
    /// whole from packets of 188 bytes, with the PCR and random access flag in the first.
    @Test(arguments: [1, 2, 150, 155, 156, 157, 163, 164, 165, 170, 183, 184, 185, 366, 367, 368, 1_000, 70_000])
    func pesPacketsCarryThePayloadExactly(length: Int) throws {
        var writer = TSPacketWriter()
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let header = PESHeader(
            streamID: PESHeader.videoStreamID, presentationTime: 9_000, decodingTime: 6_000, payloadLength: 0)
        var output: [UInt8] = []
        let pieces = [payload.prefix(length / 3), payload[(length / 3)...]]
        writer.writePES(header, payload: pieces, pid: 0x100, pcr: 3_000, randomAccess: true, into: &output)
        #expect(output.count % 188 == 0)
        var carried: [UInt8] = []
        for (index, start) in stride(from: 0, to: output.count, by: 188).enumerated() {
            let packet = Array(output[start..<(start + 188)])
            #expect(packet[0] == 0x47)
            #expect(packet[1] & 0x40 == (index == 0 ? 0x40 : 0), "payload_unit_start_indicator")
            #expect(Int(packet[1] & 0x1F) << 8 | Int(packet[2]) == 0x100)
            #expect(Int(packet[3] & 0x0F) == index % 16)
            var payloadStart = 4
            if packet[3] & 0x20 != 0 {
                let adaptationLength = Int(packet[4])
                payloadStart = 5 + adaptationLength
                if index == 0 {
                    #expect(packet[5] & 0x50 == 0x50, "random_access_indicator and PCR_flag")
                    // PCR base 3000: 0x0BB8 shifted into 33 bits, then 6 reserved bits, extension 0.
                    #expect(Array(packet[6..<12]) == [0x00, 0x00, 0x05, 0xDC, 0x7E, 0x00])
                } else if adaptationLength > 1 {
                    #expect(packet[5] == 0)
                    #expect(packet[6..<payloadStart].allSatisfy { $0 == 0xFF })
                }
            } else {
                #expect(index > 0)
            }
            carried += packet[payloadStart...]
        }
        var expected: [UInt8] = []
        header.write(into: &expected)
        #expect(carried == expected + payload)
    }

    @Test func adtsHeaderForAACLowComplexity() throws {
        let config = try AudioSpecificConfig(bytes: [0x12, 0x10])
        #expect(config == AudioSpecificConfig(objectType: 2, frequencyIndex: 4, channelConfiguration: 2))
        #expect(config.sampleRate == 44_100)
        #expect(config.adtsHeader(payloadLength: 100) == Hex.decode("fff150800d7ffc"))
    }

    @Test func adtsHeaderForExplicitHEAACUsesTheCore() throws {
        // Object type 5 (SBR) at 22.05 kHz, stereo, extension at 48 kHz, core object type 2.
        let config = try AudioSpecificConfig(bytes: [0x2B, 0x91, 0x88, 0x00])
        #expect(config == AudioSpecificConfig(objectType: 2, frequencyIndex: 7, channelConfiguration: 2))
    }

    @Test func audioConfigurationsADTSCannotCarry() {
        #expect(throws: MPEGTSError.self) { try AudioSpecificConfig(bytes: [0x12]) }
        // An explicit 24-bit frequency (index 15).
        #expect(throws: MPEGTSError.self) { try AudioSpecificConfig(bytes: [0x17, 0x80, 0x00, 0x00, 0x10]) }
        // Object type 7 (TwinVQ) has no ADTS profile.
        #expect(throws: MPEGTSError.self) { try AudioSpecificConfig(bytes: [0x3A, 0x10]) }
    }
}
