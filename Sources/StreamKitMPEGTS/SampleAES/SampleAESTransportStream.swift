/// Decrypts an MPEG-TS segment encrypted with HLS `METHOD=SAMPLE-AES` (Apple's "MPEG-2 Stream
/// Encryption Format for HTTP Live Streaming"): H.264 (stream type 0xDB), AAC in ADTS (0xCF),
/// AC-3 (0xC1) and E-AC-3 (0xC2). The result is a clear transport stream: the same packets, with
/// the PES payloads decrypted (H.264 PES packets cut into packets again, as they get shorter), the
/// program map giving the clear stream types without the encryption descriptors.
///
/// Whole-segment and pure: no I/O. Other streams (ID3, captions, clear streams) are copied.
public enum SampleAESTransportStream {
    /// The clear segment.
    ///
    /// - Parameters:
    ///   - segment: The encrypted segment, a whole number of 188-byte packets.
    ///   - key: The 16-byte key.
    ///   - iv: The 16-byte IV (the key's, or the media sequence number's, as for AES-128).
    /// - Throws: ``SampleAESError`` when `segment` is not a transport stream, has no program map or
    ///   one that cannot be rewritten, or the key or IV is not 16 bytes; `checkFailed` when an AC-3
    ///   frame fails its CRC once decrypted (a wrong key: H.264 and AAC have no such check).
    public static func decrypt(_ segment: [UInt8], key: [UInt8], iv: [UInt8]) throws(SampleAESError) -> [UInt8] {
        try transform(segment, cipher: SampleAESCipher(key: key, iv: iv, direction: .decrypt))
    }

    /// The SAMPLE-AES encryption of a clear segment (H.264 0x1B, ADTS 0x0F, AC-3 0x81, E-AC-3 0x87),
    /// with the stream types and descriptors of §3. For tests: the inverse of ``decrypt(_:key:iv:)``.
    package static func encrypt(_ segment: [UInt8], key: [UInt8], iv: [UInt8]) throws(SampleAESError) -> [UInt8] {
        try transform(segment, cipher: SampleAESCipher(key: key, iv: iv, direction: .encrypt))
    }

    /// A protected stream: its layout and its PES packets (each the indices of its packets).
    private struct Stream {
        var protection: SampleAESProgramMap.Protection
        var packetsOfPES: [[Int]] = []
    }

    static func transform(_ segment: [UInt8], cipher: SampleAESCipher) throws(SampleAESError) -> [UInt8] {
        let packets = try TransportStreamPacket.split(segment)
        let mapPIDs = Set(
            packets.lazy.filter { $0.pid == 0 }.compactMap { packet in
                SampleAESProgramMap.sectionStart(segment, packet).flatMap {
                    SampleAESProgramMap.programMapPIDs(section: segment[$0..<packet.payloadEnd])
                }
            }.first ?? [])
        guard
            let firstMap = packets.first(where: {
                mapPIDs.contains($0.pid) && SampleAESProgramMap.sectionStart(segment, $0) != nil
            })
        else {
            // Without its program map a segment's streams are unknown: refused, not passed on as clear.
            throw SampleAESError(.unsupportedProgramTable, "no program map table in the segment")
        }
        guard
            let entries = SampleAESProgramMap.entries(
                section: segment[SampleAESProgramMap.sectionStart(segment, firstMap)!..<firstMap.payloadEnd])
        else { throw SampleAESError(.unsupportedProgramTable, "the program map does not fit its packet") }

        var streams: [UInt16: Stream] = [:]
        for entry in entries {
            let encryptedType =
                cipher.direction == .decrypt ? entry.type : SampleAESProgramMap.encryptedTypes[entry.type] ?? 0
            if let protection = SampleAESProgramMap.protection(ofEncrypted: encryptedType) {
                streams[entry.pid] = Stream(protection: protection)
            }
        }
        guard !streams.isEmpty else { return segment }
        for (index, packet) in packets.enumerated() where streams[packet.pid] != nil {
            if packet.unitStart {
                streams[packet.pid]!.packetsOfPES.append([index])
            } else if !streams[packet.pid]!.packetsOfPES.isEmpty {
                streams[packet.pid]!.packetsOfPES[streams[packet.pid]!.packetsOfPES.count - 1].append(index)
            }
        }

        var output = segment
        var replacements: [Int: [UInt8]] = [:]
        var renumbered: Set<UInt16> = []
        var audioSetup: [UInt16: [UInt8]] = [:]
        for (pid, stream) in streams {
            for pesPackets in stream.packetsOfPES {
                let pes = pesPackets.map { packets[$0] }
                var bytes: [UInt8] = []
                for packet in pes { bytes += segment[packet.payloadStart..<packet.payloadEnd] }
                guard let (payload, header) = PESLayout.payload(of: bytes) else { continue }
                if cipher.direction == .encrypt, audioSetup[pid] == nil {
                    audioSetup[pid] = SampleAESAudioSetup.information(stream.protection, payload: bytes[payload])
                }
                var newPayload: [UInt8]
                switch stream.protection {
                case .h264: newPayload = SampleAESVideo.transform(bytes[payload], cipher: cipher)
                case .adts, .ac3:
                    newPayload = Array(bytes[payload])
                    try SampleAESAudio.transform(
                        &newPayload, format: stream.protection == .adts ? .adts : .ac3, cipher: cipher)
                }
                if newPayload.count == payload.count {
                    bytes.replaceSubrange(payload, with: newPayload)
                    var offset = 0
                    for packet in pes {
                        let count = packet.payloadEnd - packet.payloadStart
                        output.replaceSubrange(
                            packet.payloadStart..<packet.payloadEnd, with: bytes[offset..<(offset + count)])
                        offset += count
                    }
                    continue
                }
                var rebuilt = Array(bytes[..<payload.lowerBound])
                PESLayout.setLength(of: &rebuilt, header: header, payloadDelta: newPayload.count - payload.count)
                rebuilt += newPayload
                rebuilt += bytes[payload.upperBound...]
                for (index, packetBytes) in PESLayout.packetize(rebuilt, into: pes, of: segment, pid: pid) {
                    replacements[pesPackets[index]] = packetBytes
                }
                renumbered.insert(pid)
            }
        }

        for packet in packets where mapPIDs.contains(packet.pid) {
            guard let start = SampleAESProgramMap.sectionStart(segment, packet) else { continue }
            let section = segment[start..<packet.payloadEnd]
            guard section.first == 0x02 else { continue }
            guard
                let rewritten = SampleAESProgramMap.rewritten(
                    section: section,
                    edit: { entry in
                        SampleAESAudioSetup.edited(entry, direction: cipher.direction, setup: audioSetup[entry.pid])
                    }),
                rewritten.count + 1 <= TransportStreamPacket.size - (packet.payloadStart - packet.offset)
            else { throw SampleAESError(.unsupportedProgramTable, "the program map does not fit its packet") }
            var table = [UInt8](segment[packet.offset..<packet.payloadStart])
            table.append(0)
            table += rewritten
            table += repeatElement(0xFF, count: TransportStreamPacket.size - table.count)
            output.replaceSubrange(packet.offset..<packet.payloadEnd, with: table)
        }

        var result: [UInt8] = []
        result.reserveCapacity(segment.count + segment.count / 32)
        for (index, packet) in packets.enumerated() {
            if let replacement = replacements[index] {
                result += replacement
            } else {
                result += output[packet.offset..<packet.payloadEnd]
            }
        }
        PESLayout.renumberContinuity(&result, pids: renumbered)
        return result
    }
}
