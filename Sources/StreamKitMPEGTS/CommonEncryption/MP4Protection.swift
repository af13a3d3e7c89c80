import StreamKitCore

/// How the tracks of a fragmented MP4 are protected, as its initialization segment declares it
/// (ISO/IEC 23001-7: the `sinf` of each `encv`/`enca` sample entry), for the `cbcs` scheme that HLS
/// SAMPLE-AES uses in fMP4.
public struct MP4Protection: Hashable, Sendable {
    /// One protected track.
    public struct Track: Hashable, Sendable {
        /// `tkhd`'s track ID, which `tfhd` names in each fragment.
        public var trackID: UInt32
        /// The sample entry type before protection (`frma`: `avc1`, `hvc1`, `mp4a`, `ac-3`…).
        public var originalFormat: UInt32
        /// `tenc`'s default: whether samples are encrypted.
        public var isProtected: Bool
        /// Bytes of IV per sample in `senc` (0: the constant IV).
        public var perSampleIVSize: Int
        /// The pattern: encrypted 16-byte blocks, then clear ones, repeating.
        public var cryptByteBlock: Int
        public var skipByteBlock: Int
        /// `tenc`'s constant IV, padded to 16 bytes, when samples carry none.
        public var constantIV: [UInt8]?
        /// `tenc`'s default key ID.
        public var keyID: [UInt8]

        public init(
            trackID: UInt32, originalFormat: UInt32, isProtected: Bool = true, perSampleIVSize: Int = 0,
            cryptByteBlock: Int, skipByteBlock: Int, constantIV: [UInt8]?,
            keyID: [UInt8] = Array(repeating: 0, count: 16)
        ) {
            self.trackID = trackID
            self.originalFormat = originalFormat
            self.isProtected = isProtected
            self.perSampleIVSize = perSampleIVSize
            self.cryptByteBlock = cryptByteBlock
            self.skipByteBlock = skipByteBlock
            self.constantIV = constantIV
            self.keyID = keyID
        }
    }

    /// The protected tracks by track ID.
    public var tracks: [UInt32: Track]
    /// `trex`'s default sample size of each track, for fragments that give none.
    public var defaultSampleSizes: [UInt32: UInt32]

    public init(tracks: [UInt32: Track], defaultSampleSizes: [UInt32: UInt32] = [:]) {
        self.tracks = tracks
        self.defaultSampleSizes = defaultSampleSizes
    }

    static let moov = MP4Box.type("moov")
    static let trak = MP4Box.type("trak")
    static let tkhd = MP4Box.type("tkhd")
    static let mdia = MP4Box.type("mdia")
    static let minf = MP4Box.type("minf")
    static let stbl = MP4Box.type("stbl")
    static let stsd = MP4Box.type("stsd")
    static let encv = MP4Box.type("encv")
    static let enca = MP4Box.type("enca")
    static let sinf = MP4Box.type("sinf")
    static let frma = MP4Box.type("frma")
    static let schm = MP4Box.type("schm")
    static let schi = MP4Box.type("schi")
    static let tenc = MP4Box.type("tenc")
    static let mvex = MP4Box.type("mvex")
    static let trex = MP4Box.type("trex")
    static let pssh = MP4Box.type("pssh")
    static let free = MP4Box.type("free")
    static let cbcs = MP4Box.type("cbcs")

    /// Reads the protection of `initSegment`.
    ///
    /// - Throws: ``SampleAESError`` `notFragmentedMP4` when it is not an init segment with a
    ///   `moov`; `unsupportedProtection` for a scheme other than `cbcs` or a protected track
    ///   without a `tenc`.
    public static func parse(initSegment bytes: [UInt8]) throws(SampleAESError) -> MP4Protection {
        guard let moov = try MP4Box.first(moov, in: bytes, 0..<bytes.count) else {
            throw SampleAESError(.notFragmentedMP4, "the init segment has no 'moov' box")
        }
        var protection = MP4Protection(tracks: [:], defaultSampleSizes: [:])
        for box in try MP4Box.boxes(in: bytes, moov.payload) {
            if box.type == mvex {
                for trexBox in try MP4Box.boxes(in: bytes, box.payload) where trexBox.type == trex {
                    var reader = MP4Reader(bytes, trexBox.payload, what: "'trex'")
                    _ = try reader.versionAndFlags()
                    let trackID = try reader.uint32()
                    try reader.skip(8)
                    protection.defaultSampleSizes[trackID] = try reader.uint32()
                }
            }
            guard box.type == trak else { continue }
            let trackID = try Self.trackID(of: box, in: bytes)
            for entry in try sampleEntries(of: box, in: bytes) where entry.box.type == encv || entry.box.type == enca {
                guard protection.tracks[trackID] == nil else { continue }  // the first protected entry
                protection.tracks[trackID] = try track(trackID, entry: entry, in: bytes)
            }
        }
        return protection
    }

    /// `initSegment` as clear: each protected sample entry under its original type and its `sinf`
    /// (and any `pssh`) turned into `free` boxes of the same size, so that every size and offset
    /// stays as it was.
    public static func clearInitSegment(_ initSegment: [UInt8]) throws(SampleAESError) -> [UInt8] {
        var bytes = initSegment
        guard let moov = try MP4Box.first(moov, in: bytes, 0..<bytes.count) else {
            throw SampleAESError(.notFragmentedMP4, "the init segment has no 'moov' box")
        }
        for box in try MP4Box.boxes(in: bytes, moov.payload) {
            if box.type == pssh { MP4Box.retype(&bytes, boxAt: box.start, to: free) }
            guard box.type == trak else { continue }
            for entry in try sampleEntries(of: box, in: bytes) where entry.box.type == encv || entry.box.type == enca {
                guard let sinfBox = try MP4Box.first(sinf, in: bytes, entry.children),
                    let frmaBox = try MP4Box.first(frma, in: bytes, sinfBox.payload), frmaBox.payload.count >= 4
                else { throw SampleAESError(.unsupportedProtection, "a protected sample entry without 'sinf'/'frma'") }
                MP4Box.retype(&bytes, boxAt: entry.box.start, to: MP4Box.readUInt32(bytes, frmaBox.payloadStart))
                MP4Box.retype(&bytes, boxAt: sinfBox.start, to: free)
            }
        }
        return bytes
    }

    /// A sample entry box and the range of its child boxes (after its fixed fields).
    struct SampleEntry {
        var box: MP4Box
        var children: Range<Int>
    }

    private static func trackID(of trakBox: MP4Box, in bytes: [UInt8]) throws(SampleAESError) -> UInt32 {
        guard let header = try MP4Box.first(tkhd, in: bytes, trakBox.payload) else {
            throw SampleAESError(.notFragmentedMP4, "a 'trak' without 'tkhd'")
        }
        var reader = MP4Reader(bytes, header.payload, what: "'tkhd'")
        let (version, _) = try reader.versionAndFlags()
        try reader.skip(version == 1 ? 16 : 8)
        return try reader.uint32()
    }

    /// The sample entries of a track's `stsd` (an empty list when the path to it is missing).
    static func sampleEntries(of trakBox: MP4Box, in bytes: [UInt8]) throws(SampleAESError) -> [SampleEntry] {
        var range = trakBox.payload
        for type in [mdia, minf, stbl, stsd] {
            guard let box = try MP4Box.first(type, in: bytes, range) else { return [] }
            range = box.payload
        }
        // stsd: version and flags, entry count, then the entries.
        guard range.count >= 8 else { throw SampleAESError(.notFragmentedMP4, "a truncated 'stsd'") }
        var entries: [SampleEntry] = []
        for box in try MP4Box.boxes(in: bytes, range.lowerBound + 8..<range.upperBound) {
            // SampleEntry: 6 reserved bytes and a data reference index; then a visual entry's 70
            // bytes, or an audio entry's 20 (16 or 36 more in QuickTime's versions 1 and 2).
            var fixed = 8
            if box.type == encv {
                fixed += 70
            } else if box.type == enca {
                guard box.payload.count >= 10 else { throw SampleAESError(.notFragmentedMP4, "a truncated 'enca'") }
                let version = MP4Box.readUInt16(bytes, box.payloadStart + 8)
                fixed += 20 + (version == 1 ? 16 : version == 2 ? 36 : 0)
            }
            let start = min(box.payloadStart + fixed, box.end)
            entries.append(SampleEntry(box: box, children: start..<box.end))
        }
        return entries
    }

    private static func track(_ trackID: UInt32, entry: SampleEntry, in bytes: [UInt8]) throws(SampleAESError) -> Track
    {
        guard let sinfBox = try MP4Box.first(sinf, in: bytes, entry.children) else {
            throw SampleAESError(.unsupportedProtection, "track \(trackID): a protected sample entry without 'sinf'")
        }
        let children = try MP4Box.boxes(in: bytes, sinfBox.payload)
        guard let frmaBox = children.first(where: { $0.type == frma }), frmaBox.payload.count >= 4 else {
            throw SampleAESError(.unsupportedProtection, "track \(trackID): no 'frma' (original format)")
        }
        guard let schmBox = children.first(where: { $0.type == schm }) else {
            throw SampleAESError(.unsupportedProtection, "track \(trackID): no 'schm' (protection scheme)")
        }
        var schmReader = MP4Reader(bytes, schmBox.payload, what: "'schm'")
        _ = try schmReader.versionAndFlags()
        let scheme = try schmReader.uint32()
        guard scheme == cbcs else {
            throw SampleAESError(
                .unsupportedProtection,
                "track \(trackID) is protected with '\(MP4Box.name(scheme))'; SAMPLE-AES in fMP4 is 'cbcs'")
        }
        guard let schiBox = children.first(where: { $0.type == schi }),
            let tencBox = try MP4Box.first(tenc, in: bytes, schiBox.payload)
        else { throw SampleAESError(.unsupportedProtection, "track \(trackID): no 'tenc' (default protection)") }
        var reader = MP4Reader(bytes, tencBox.payload, what: "'tenc'")
        let (version, _) = try reader.versionAndFlags()
        try reader.skip(1)
        let pattern = try reader.uint8()
        let isProtected = try reader.uint8() == 1
        let ivSize = Int(try reader.uint8())
        let keyID = try reader.bytes(16)
        var constantIV: [UInt8]?
        if isProtected && ivSize == 0 {
            let size = Int(try reader.uint8())
            guard size == 8 || size == 16 else {
                throw SampleAESError(.unsupportedProtection, "track \(trackID): a constant IV of \(size) bytes")
            }
            constantIV = try reader.bytes(size) + [UInt8](repeating: 0, count: 16 - size)
        }
        guard [0, 8, 16].contains(ivSize) else {
            throw SampleAESError(.unsupportedProtection, "track \(trackID): per-sample IVs of \(ivSize) bytes")
        }
        return Track(
            trackID: trackID, originalFormat: MP4Box.readUInt32(bytes, frmaBox.payloadStart), isProtected: isProtected,
            perSampleIVSize: ivSize, cryptByteBlock: version >= 1 ? Int(pattern >> 4) : 0,
            skipByteBlock: version >= 1 ? Int(pattern & 0x0F) : 0, constantIV: constantIV, keyID: keyID)
    }
}
