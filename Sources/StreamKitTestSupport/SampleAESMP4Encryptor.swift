import Foundation
import StreamKitCore
import StreamKitMPEGTS

/// Turns a clear fragmented MP4 stream (an init segment and media segments, H.264 and AAC, as
/// ffmpeg's HLS muxer writes them) into HLS `METHOD=SAMPLE-AES` fMP4: the `cbcs` scheme of
/// ISO/IEC 23001-7 with a constant IV. Video samples are encrypted NAL unit by NAL unit (the
/// length prefix and the first 32 bytes of each slice clear, then the 1:9 pattern), audio samples
/// whole; each fragment gets a `senc` box, and the boxes around it (and `sidx`) grow to hold it.
///
/// Written apart from the library's decryption (it shares only the box reader); tests prove it by
/// an independent route: ffmpeg's mov demuxer decrypts `cbcs` with `-decryption_key`.
public struct SampleAESMP4Encryptor: Sendable {
    public let key: [UInt8]
    public let iv: [UInt8]
    public let keyID: [UInt8]
    /// The tracks of the init segment last encrypted: track ID to whether it is video.
    private let videoTracks: [UInt32: Bool]

    private static func type(_ name: StaticString) -> UInt32 { MP4Box.type(name) }

    /// Reads the tracks of `clearInit`.
    public init(
        clearInit: [UInt8], key: [UInt8], iv: [UInt8], keyID: [UInt8] = Array(repeating: 0x11, count: 16)
    ) throws {
        self.key = key
        self.iv = iv
        self.keyID = keyID
        var tracks: [UInt32: Bool] = [:]
        let moov = try Self.require(MP4Box.first(Self.type("moov"), in: clearInit, 0..<clearInit.count), "moov")
        for trak in try MP4Box.boxes(in: clearInit, moov.payload) where trak.type == Self.type("trak") {
            let tkhd = try Self.require(MP4Box.first(Self.type("tkhd"), in: clearInit, trak.payload), "tkhd")
            let version = clearInit[tkhd.payloadStart]
            let idOffset = tkhd.payloadStart + 4 + (version == 1 ? 16 : 8)
            let trackID = Self.uint32(clearInit, idOffset)
            var range = trak.payload
            for name in ["mdia", "minf", "stbl", "stsd"] {
                range = try Self.require(MP4Box.first(Self.fourCC(name), in: clearInit, range), name).payload
            }
            let entry = try Self.require(
                MP4Box.boxes(in: clearInit, range.lowerBound + 8..<range.upperBound).first, "entry")
            tracks[trackID] = entry.type == Self.type("avc1")
        }
        videoTracks = tracks
    }

    // MARK: Init

    /// The init segment with each `avc1` and `mp4a` sample entry protected (`encv`, `enca` with a
    /// `sinf`: `frma`, `schm` `cbcs`, `tenc` version 1 with the pattern and the constant IV).
    public func encryptInit(_ clear: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        for box in try MP4Box.boxes(in: clear, 0..<clear.count) {
            output += try rewriteInitBox(box, in: clear)
        }
        return output
    }

    private func rewriteInitBox(_ box: MP4Box, in bytes: [UInt8]) throws -> [UInt8] {
        let name = box.typeName
        switch name {
        case "moov", "trak", "mdia", "minf", "stbl":
            var payload: [UInt8] = []
            for child in try MP4Box.boxes(in: bytes, box.payload) { payload += try rewriteInitBox(child, in: bytes) }
            return Self.box(name, payload)
        case "stsd":
            var payload = Array(bytes[box.payloadStart..<box.payloadStart + 8])
            for child in try MP4Box.boxes(in: bytes, box.payloadStart + 8..<box.end) {
                payload += try rewriteInitBox(child, in: bytes)
            }
            return Self.box(name, payload)
        case "avc1", "mp4a":
            let video = name == "avc1"
            let tenc =
                Self.fullBox("tenc", version: 1, [0, video ? 0x19 : 0x10, 1, 0] + keyID + [UInt8(iv.count)] + iv)
            let sinf = Self.box(
                "sinf",
                Self.box("frma", Array(name.utf8))
                    + Self.fullBox("schm", version: 0, Array("cbcs".utf8) + [0, 1, 0, 0])
                    + Self.box("schi", tenc))
            return Self.box(video ? "encv" : "enca", Array(bytes[box.payload]) + sinf)
        default:
            return Array(bytes[box.start..<box.end])
        }
    }

    // MARK: Segments

    /// A media segment with its samples encrypted and a `senc` in each track fragment.
    public func encryptSegment(_ clear: [UInt8]) throws -> [UInt8] {
        var bytes = clear
        let top = try MP4Box.boxes(in: bytes, 0..<bytes.count)
        var pieces: [[UInt8]] = []
        var growth: [Int] = []
        for box in top {
            guard box.typeName == "moof" else {
                pieces.append(Array(bytes[box.start..<box.end]))
                continue
            }
            // Encrypt the samples in place first (the mdat does not move relative to its moof's start).
            var sencs: [Int: [UInt8]] = [:]
            let trafs = try MP4Box.boxes(in: bytes, box.payload).enumerated().filter { $0.element.typeName == "traf" }
            for (position, traf) in trafs {
                sencs[position] = try encryptFragment(traf, moof: box, in: &bytes)
            }
            var moofPayload: [UInt8] = []
            let added = sencs.values.reduce(0) { $0 + $1.count }
            for (position, child) in try MP4Box.boxes(in: bytes, box.payload).enumerated() {
                guard child.typeName == "traf" else {
                    moofPayload += bytes[child.start..<child.end]
                    continue
                }
                var trafPayload: [UInt8] = []
                for inner in try MP4Box.boxes(in: bytes, child.payload) {
                    var copy = Array(bytes[inner.start..<inner.end])
                    if inner.typeName == "trun", copy[11] & 0x01 != 0 {
                        // The data offset counts from the moof, which grows by the senc boxes.
                        let offset = Int32(bitPattern: Self.uint32(copy, 16)) + Int32(added)
                        Self.put(UInt32(bitPattern: offset), into: &copy, at: 16)
                    }
                    trafPayload += copy
                }
                moofPayload += Self.box("traf", trafPayload + (sencs[position] ?? []))
            }
            pieces.append(Self.box("moof", moofPayload))
            growth.append(added)
        }
        // A sidx per track: each reference (one per fragment) grows with its moof.
        for index in pieces.indices where pieces[index].count >= 8 && Self.uint32(pieces[index], 4) == Self.type("sidx")
        {
            var sidx = pieces[index]
            let version = sidx[8]
            var offset = 8 + 4 + 8 + (version == 0 ? 8 : 16) + 2
            let count = Int(sidx[offset]) << 8 | Int(sidx[offset + 1])
            offset += 2
            if count == growth.count {
                for reference in 0..<count {
                    let word = Self.uint32(sidx, offset + 12 * reference)
                    Self.put(word + UInt32(growth[reference]), into: &sidx, at: offset + 12 * reference)
                }
            }
            pieces[index] = sidx
        }
        return pieces.flatMap { $0 }
    }

    /// Encrypts one track fragment's samples in `bytes` and returns its `senc` box.
    private func encryptFragment(_ traf: MP4Box, moof: MP4Box, in bytes: inout [UInt8]) throws -> [UInt8] {
        let children = try MP4Box.boxes(in: bytes, traf.payload)
        let tfhd = try Self.require(children.first { $0.typeName == "tfhd" }, "tfhd")
        let flags = Self.uint32(bytes, tfhd.payloadStart) & 0xFF_FFFF
        guard flags & 0x02_0000 != 0, flags & 0x01 == 0 else {
            throw TestSupportError("only default-base-is-moof fragments")
        }
        let trackID = Self.uint32(bytes, tfhd.payloadStart + 4)
        var cursor = tfhd.payloadStart + 8
        if flags & 0x02 != 0 { cursor += 4 }
        if flags & 0x08 != 0 { cursor += 4 }
        let defaultSize = flags & 0x10 != 0 ? Int(Self.uint32(bytes, cursor)) : nil
        let video = videoTracks[trackID] ?? false
        var samples: [Range<Int>] = []
        var position = moof.start
        for run in children where run.typeName == "trun" {
            let runFlags = Self.uint32(bytes, run.payloadStart) & 0xFF_FFFF
            let count = Int(Self.uint32(bytes, run.payloadStart + 4))
            var field = run.payloadStart + 8
            if runFlags & 0x01 != 0 {
                position = moof.start + Int(Int32(bitPattern: Self.uint32(bytes, field)))
                field += 4
            }
            if runFlags & 0x04 != 0 { field += 4 }
            for _ in 0..<count {
                var size = defaultSize
                for bit in [0x100, 0x200, 0x400, 0x800] where runFlags & UInt32(bit) != 0 {
                    if bit == 0x200 { size = Int(Self.uint32(bytes, field)) }
                    field += 4
                }
                let length = try Self.require(size, "sample size")
                samples.append(position..<position + length)
                position += length
            }
        }
        var entries: [UInt8] = []
        for sample in samples {
            if video {
                let subsamples = try encryptVideoSample(sample, in: &bytes)
                entries += Self.uint16Bytes(subsamples.count)
                for (clear, protected) in subsamples {
                    entries += Self.uint16Bytes(clear) + Self.uint32Bytes(protected)
                }
            } else {
                try encrypt(&bytes, sample.lowerBound..<sample.lowerBound + sample.count / 16 * 16)
            }
        }
        return Self.fullBox("senc", version: 0, flags: video ? 2 : 0, Self.uint32Bytes(samples.count) + entries)
    }

    /// Encrypts the slices of one length-prefixed H.264 sample; returns its subsamples.
    private func encryptVideoSample(_ sample: Range<Int>, in bytes: inout [UInt8]) throws -> [(Int, Int)] {
        var subsamples: [(Int, Int)] = []
        var position = sample.lowerBound
        while position < sample.upperBound {
            let length = Int(Self.uint32(bytes, position))
            guard length > 0, position + 4 + length <= sample.upperBound else {
                throw TestSupportError("a bad NAL length")
            }
            let nalType = bytes[position + 4] & 0x1F
            if (1...5).contains(nalType) && length > 48 {
                let protectedStart = position + 4 + 32
                let protectedCount = length - 32
                // The pattern: one block encrypted, nine clear; each subsample's chain from the IV.
                var encryptor = try AES128CBC.Encryptor(key: key, iv: iv, padding: .none)
                var block = protectedStart
                let end = protectedStart + protectedCount
                while end - block >= 16 {
                    bytes.replaceSubrange(block..<block + 16, with: encryptor.update(bytes[block..<block + 16]))
                    block += 16
                    block += min(9 * 16, end - block)
                }
                subsamples.append((4 + 32, protectedCount))
            } else {
                var clear = 4 + length
                while clear > 0xFFFF {
                    subsamples.append((0xFFFF, 0))
                    clear -= 0xFFFF
                }
                subsamples.append((clear, 0))
            }
            position += 4 + length
        }
        return subsamples
    }

    private func encrypt(_ bytes: inout [UInt8], _ range: Range<Int>) throws {
        guard !range.isEmpty else { return }
        var encryptor = try AES128CBC.Encryptor(key: key, iv: iv, padding: .none)
        bytes.replaceSubrange(range, with: encryptor.update(bytes[range]))
    }

    // MARK: Bytes

    private static func require<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw TestSupportError("the clear MP4 has no \(what)") }
        return value
    }

    private static func fourCC(_ name: String) -> UInt32 { name.utf8.reduce(0) { $0 << 8 | UInt32($1) } }

    static func box(_ name: String, _ payload: [UInt8]) -> [UInt8] {
        uint32Bytes(payload.count + 8) + Array(name.utf8) + payload
    }

    static func fullBox(_ name: String, version: UInt8, flags: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(name, [version] + Array(uint32Bytes(Int(flags)).dropFirst()) + payload)
    }

    static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func put(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }

    static func uint32Bytes(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }
    static func uint16Bytes(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}

/// A SAMPLE-AES fMP4 (`cbcs`) HLS stream next to the clear one it was made from: ffmpeg's fMP4 HLS
/// output (H.264 and AAC muxed, two-second segments) encrypted by ``SampleAESMP4Encryptor``.
public struct SampleAESMP4Fixture: Sendable {
    /// Holds `index.m3u8` (SAMPLE-AES, `key.bin`, `init.mp4`, `seg*.m4s`) and the clear stream
    /// `clear.m3u8` (`clear-init.mp4`, `clear*.m4s`).
    public let directory: URL
    public let key: [UInt8]
    public let iv: [UInt8]
    /// The segments' names, in order.
    public let segments: [String]

    public var playlist: URL { directory.appendingPathComponent("index.m3u8") }

    /// Makes the fixture: `seconds` of test pattern and tone.
    public static func make(seconds: Int = 4) async throws -> SampleAESMP4Fixture {
        let directory = try TestRun.makeTemporaryDirectory("sample-aes-mp4")
        _ = try await Tool.ffmpeg.run(
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f",
                "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "\(seconds)", "-c:v", "libx264", "-g",
                "25",
                "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "2",
                "-hls_segment_type", "fmp4", "-hls_playlist_type", "vod", "-hls_fmp4_init_filename", "clear-init.mp4",
                "-hls_segment_filename", directory.appendingPathComponent("clear%d.m4s").path,
                directory.appendingPathComponent("clear.m3u8").path,
            ], workingDirectory: directory)
        let key: [UInt8] = (0..<16).map { UInt8(0x20 + $0) }
        let iv: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
        let clearInit = Array(try Data(contentsOf: directory.appendingPathComponent("clear-init.mp4")))
        let encryptor = try SampleAESMP4Encryptor(clearInit: clearInit, key: key, iv: iv)
        try Data(try encryptor.encryptInit(clearInit)).write(to: directory.appendingPathComponent("init.mp4"))
        try Data(key).write(to: directory.appendingPathComponent("key.bin"))
        let clearPlaylist = try String(contentsOf: directory.appendingPathComponent("clear.m3u8"), encoding: .utf8)
        var playlist = ""
        var segments: [String] = []
        for line in clearPlaylist.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#EXT-X-MAP") {
                playlist +=
                    "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"key.bin\",IV=0x\(Hex.encode(iv)),KEYFORMAT=\"identity\"\n"
                playlist += "#EXT-X-MAP:URI=\"init.mp4\"\n"
            } else if line.hasPrefix("clear"), line.hasSuffix(".m4s") {
                let name = "seg" + line.dropFirst("clear".count)
                let clear = Array(try Data(contentsOf: directory.appendingPathComponent(String(line))))
                try Data(try encryptor.encryptSegment(clear)).write(to: directory.appendingPathComponent(name))
                segments.append(name)
                playlist += name + "\n"
            } else {
                playlist += line + "\n"
            }
        }
        try Data(playlist.dropLast().utf8).write(to: directory.appendingPathComponent("index.m3u8"))
        return SampleAESMP4Fixture(directory: directory, key: key, iv: iv, segments: segments)
    }

    /// One file of the init segment and the media segments named, for demuxers that read a file.
    public func concatenated(init initName: String, segments names: [String], to name: String) throws -> URL {
        var bytes = Data()
        for file in [initName] + names { bytes += try Data(contentsOf: directory.appendingPathComponent(file)) }
        let url = directory.appendingPathComponent(name)
        try bytes.write(to: url)
        return url
    }

    /// The clear segments' names, in order.
    public var clearSegments: [String] { segments.map { "clear" + $0.dropFirst("seg".count) } }
}
