import StreamKitCore

extension MP4Protection {
    static let moof = MP4Box.type("moof")
    static let traf = MP4Box.type("traf")
    static let tfhd = MP4Box.type("tfhd")
    static let trun = MP4Box.type("trun")
    static let senc = MP4Box.type("senc")
    static let saiz = MP4Box.type("saiz")
    static let saio = MP4Box.type("saio")
    static let sbgp = MP4Box.type("sbgp")
    static let seig = MP4Box.type("seig")
    static let mdat = MP4Box.type("mdat")

    /// One sample of a fragment: where it is in the segment and how it is encrypted.
    struct Sample {
        var range: Range<Int>
        var iv: [UInt8]
        /// (clear bytes, protected bytes) in order; empty: the whole sample is protected.
        var subsamples: [(clear: Int, protected: Int)]
        /// 16-byte blocks decrypted, then left, repeating (0 and 0: every block).
        var crypt: Int
        var skip: Int
    }

    /// `segment` (one or more `moof`+`mdat` fragments) decrypted: each protected track's samples
    /// decrypted in place as `cbcs` does it, and the `senc`, `saiz` and `saio` boxes turned into
    /// `free` boxes of the same size, so that every offset stays as it was.
    ///
    /// In each subsample the clear bytes come first, then the protected ones: from the IV, the
    /// first `cryptByteBlock` 16-byte blocks are decrypted, the next `skipByteBlock` left, and so
    /// on, the cipher chain running through the decrypted blocks only; a remainder shorter than
    /// the blocks to decrypt stays clear. A sample without subsamples is decrypted whole, block by
    /// block, its last partial block clear.
    ///
    /// - Parameters:
    ///   - key: The 16-byte key (`EXT-X-KEY`'s).
    ///   - iv: The IV when neither `tenc` nor `senc` gives one (`EXT-X-KEY`'s).
    /// - Throws: ``SampleAESError``: `notFragmentedMP4` for boxes or samples that do not fit;
    ///   `unsupportedProtection` for `seig` sample groups (keys or patterns that change by
    ///   sample) or a `senc` that does not match the samples; `invalidKey`.
    public func decryptSegment(_ segment: [UInt8], key: [UInt8], iv: [UInt8]) throws(SampleAESError) -> [UInt8] {
        // The key is checked once here; each sample's chain starts from its own IV.
        _ = try SampleAESCipher(key: key, iv: [UInt8](repeating: 0, count: 16), direction: .decrypt)
        var bytes = segment
        let boxes = try MP4Box.boxes(in: bytes, 0..<bytes.count)
        // Samples are media data: one that reaches outside every `mdat` would decrypt box headers.
        let mediaData = boxes.filter { $0.type == Self.mdat }.map(\.payload)
        for box in boxes where box.type == Self.moof {
            var dataEnd = box.start
            for trafBox in try MP4Box.boxes(in: bytes, box.payload) where trafBox.type == Self.traf {
                let (samples, end) = try fragmentSamples(
                    trafBox, moof: box, previousEnd: dataEnd, in: &bytes, fallbackIV: iv)
                dataEnd = end
                for sample in samples {
                    let range = sample.range
                    guard
                        range.isEmpty
                            || mediaData.contains(where: {
                                $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound
                            })
                    else {
                        throw SampleAESError(
                            .notFragmentedMP4, "a sample at \(sample.range) is not inside an 'mdat' box")
                    }
                    try Self.decrypt(sample, in: &bytes, key: key)
                }
            }
        }
        return bytes
    }

    /// The samples of one track fragment that need decrypting (none for a clear track), and where
    /// its data ends; retypes its `senc`, `saiz` and `saio`.
    private func fragmentSamples(
        _ trafBox: MP4Box, moof: MP4Box, previousEnd: Int, in bytes: inout [UInt8], fallbackIV: [UInt8]
    ) throws(SampleAESError) -> (samples: [Sample], dataEnd: Int) {
        let children = try MP4Box.boxes(in: bytes, trafBox.payload)
        guard let header = children.first(where: { $0.type == Self.tfhd }) else {
            throw SampleAESError(.notFragmentedMP4, "a 'traf' without 'tfhd'")
        }
        var reader = MP4Reader(bytes, header.payload, what: "'tfhd'")
        let flags = try reader.versionAndFlags().flags
        let trackID = try reader.uint32()
        var base = flags & 0x02_0000 != 0 ? moof.start : previousEnd
        if flags & 0x01 != 0 {
            let offset = try reader.uint64()
            guard offset <= UInt64(bytes.count) else {
                throw SampleAESError(.notFragmentedMP4, "a base data offset past the segment")
            }
            base = Int(offset)
        }
        if flags & 0x02 != 0 { try reader.skip(4) }
        if flags & 0x08 != 0 { try reader.skip(4) }
        let defaultSize = flags & 0x10 != 0 ? try reader.uint32() : defaultSampleSizes[trackID]

        // The samples' places, from each run's data offset (or where the last run ended).
        var ranges: [Range<Int>] = []
        var position = base
        for run in children where run.type == Self.trun {
            var runReader = MP4Reader(bytes, run.payload, what: "'trun'")
            let runFlags = try runReader.versionAndFlags().flags
            let count = Int(try runReader.uint32())
            if runFlags & 0x01 != 0 {
                let offset = Int(Int32(bitPattern: try runReader.uint32()))
                position = base + offset
            }
            if runFlags & 0x04 != 0 { try runReader.skip(4) }
            let fields = [0x100, 0x200, 0x400, 0x800].filter { runFlags & $0 != 0 }
            // A count the run's fields (or the segment) cannot hold is damage, not a long loop.
            guard count <= bytes.count, count * fields.count * 4 <= runReader.end - runReader.position else {
                throw SampleAESError(.notFragmentedMP4, "a 'trun' of \(count) samples does not fit")
            }
            for _ in 0..<count {
                var size = defaultSize
                for field in fields {
                    let value = try runReader.uint32()
                    if field == 0x200 { size = value }
                }
                guard let size, position >= 0, Int(size) <= bytes.count - position else {
                    throw SampleAESError(.notFragmentedMP4, "track \(trackID): a sample past the segment's end")
                }
                ranges.append(position..<position + Int(size))
                position += Int(size)
            }
        }
        for box in children where [Self.senc, Self.saiz, Self.saio].contains(box.type) {
            MP4Box.retype(&bytes, boxAt: box.start, to: Self.free)
        }
        guard let track = tracks[trackID], track.isProtected else { return ([], position) }
        if let group = children.first(where: { $0.type == Self.sbgp }), group.payload.count >= 8,
            MP4Box.readUInt32(bytes, group.payloadStart + 4) == Self.seig
        {
            throw SampleAESError(
                .unsupportedProtection, "track \(trackID): 'seig' sample groups change the protection by sample")
        }
        guard let encryption = children.first(where: { $0.type == Self.senc }) else {
            guard track.perSampleIVSize == 0 else {
                throw SampleAESError(.unsupportedProtection, "track \(trackID): per-sample IVs and no 'senc'")
            }
            // No per-sample information: every sample whole, with the constant IV.
            let iv = track.constantIV ?? fallbackIV
            return (
                ranges.map {
                    Sample(range: $0, iv: iv, subsamples: [], crypt: track.cryptByteBlock, skip: track.skipByteBlock)
                }, position
            )
        }
        var sencReader = MP4Reader(bytes, encryption.payload, what: "'senc'")
        let sencFlags = try sencReader.versionAndFlags().flags
        let count = Int(try sencReader.uint32())
        guard count == ranges.count else {
            throw SampleAESError(
                .unsupportedProtection, "track \(trackID): 'senc' describes \(count) of \(ranges.count) samples")
        }
        var samples: [Sample] = []
        for range in ranges {
            var iv = track.constantIV ?? fallbackIV
            if track.perSampleIVSize > 0 {
                iv =
                    try sencReader.bytes(track.perSampleIVSize)
                    + [UInt8](repeating: 0, count: 16 - track.perSampleIVSize)
            }
            var subsamples: [(clear: Int, protected: Int)] = []
            if sencFlags & 0x02 != 0 {
                let entries = Int(try sencReader.uint16())
                for _ in 0..<entries {
                    subsamples.append((Int(try sencReader.uint16()), Int(try sencReader.uint32())))
                }
            }
            samples.append(
                Sample(
                    range: range, iv: iv, subsamples: subsamples, crypt: track.cryptByteBlock,
                    skip: track.skipByteBlock))
        }
        return (samples, position)
    }

    /// Decrypts one sample in place.
    private static func decrypt(_ sample: Sample, in bytes: inout [UInt8], key: [UInt8]) throws(SampleAESError) {
        guard sample.iv.count == 16 else { throw SampleAESError(.invalidKey, "an IV of \(sample.iv.count) bytes") }
        let cipher = try SampleAESCipher(key: key, iv: sample.iv, direction: .decrypt)
        guard !sample.subsamples.isEmpty else {
            var chain = cipher.chain()
            let whole = sample.range.count / 16 * 16
            chain.apply(&bytes, sample.range.lowerBound..<sample.range.lowerBound + whole)
            return
        }
        let total = sample.subsamples.reduce(0) { $0 + $1.clear + $1.protected }
        guard total == sample.range.count else {
            throw SampleAESError(.notFragmentedMP4, "subsamples of \(total) bytes in a sample of \(sample.range.count)")
        }
        // Every block when there is no pattern; otherwise `crypt` blocks, then `skip` left clear.
        let crypt = sample.crypt == 0 && sample.skip == 0 ? 1 : sample.crypt
        let skip = sample.crypt == 0 && sample.skip == 0 ? 0 : sample.skip
        guard crypt > 0 else { return }
        var position = sample.range.lowerBound
        for subsample in sample.subsamples {
            position += subsample.clear
            // Each subsample's chain starts again from the sample's IV.
            var chain = cipher.chain()
            var block = position
            let end = position + subsample.protected
            while end - block >= crypt * 16 {
                chain.apply(&bytes, block..<block + crypt * 16)
                block += crypt * 16
                block += min(skip * 16, end - block)
            }
            position = end
        }
    }
}
