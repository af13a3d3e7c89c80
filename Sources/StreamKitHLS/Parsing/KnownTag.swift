/// The tags RFC 8216bis defines (§4.4), recognized by name.
enum KnownTag: Int, CaseIterable {
    case extm3u, version, independentSegments, start, define
    case targetDuration, mediaSequence, discontinuitySequence, endList, playlistType, iFramesOnly, partInformation
    case serverControl
    case extinf, byteRange, discontinuity, key, map, programDateTime, gap, bitrate, part
    case dateRange, skip, preloadHint, renditionReport
    case media, streamInf, iFrameStreamInf, sessionData, sessionKey, contentSteering

    /// The name after `#`.
    var name: String {
        switch self {
        case .extm3u: "EXTM3U"
        case .version: "EXT-X-VERSION"
        case .independentSegments: "EXT-X-INDEPENDENT-SEGMENTS"
        case .start: "EXT-X-START"
        case .define: "EXT-X-DEFINE"
        case .targetDuration: "EXT-X-TARGETDURATION"
        case .mediaSequence: "EXT-X-MEDIA-SEQUENCE"
        case .discontinuitySequence: "EXT-X-DISCONTINUITY-SEQUENCE"
        case .endList: "EXT-X-ENDLIST"
        case .playlistType: "EXT-X-PLAYLIST-TYPE"
        case .iFramesOnly: "EXT-X-I-FRAMES-ONLY"
        case .partInformation: "EXT-X-PART-INF"
        case .serverControl: "EXT-X-SERVER-CONTROL"
        case .extinf: "EXTINF"
        case .byteRange: "EXT-X-BYTERANGE"
        case .discontinuity: "EXT-X-DISCONTINUITY"
        case .key: "EXT-X-KEY"
        case .map: "EXT-X-MAP"
        case .programDateTime: "EXT-X-PROGRAM-DATE-TIME"
        case .gap: "EXT-X-GAP"
        case .bitrate: "EXT-X-BITRATE"
        case .part: "EXT-X-PART"
        case .dateRange: "EXT-X-DATERANGE"
        case .skip: "EXT-X-SKIP"
        case .preloadHint: "EXT-X-PRELOAD-HINT"
        case .renditionReport: "EXT-X-RENDITION-REPORT"
        case .media: "EXT-X-MEDIA"
        case .streamInf: "EXT-X-STREAM-INF"
        case .iFrameStreamInf: "EXT-X-I-FRAME-STREAM-INF"
        case .sessionData: "EXT-X-SESSION-DATA"
        case .sessionKey: "EXT-X-SESSION-KEY"
        case .contentSteering: "EXT-X-CONTENT-STEERING"
        }
    }

    /// Which kind of playlist the tag belongs to, or `nil` for tags allowed in both.
    var playlistKind: PlaylistKind? {
        switch self {
        case .extm3u, .version, .independentSegments, .start, .define: nil
        case .media, .streamInf, .iFrameStreamInf, .sessionData, .sessionKey, .contentSteering: .multivariant
        default: .media
        }
    }

    /// Whether the tag takes no value (`#EXT-X-ENDLIST`).
    var takesNoValue: Bool {
        switch self {
        case .extm3u, .independentSegments, .endList, .iFramesOnly, .discontinuity, .gap: true
        default: false
        }
    }

    /// What a parse does with the tag when its value cannot be read (docs/CLI.md, "How playlists are read").
    var recovery: TagRecovery {
        switch self {
        // Metadata a player may read but the media does not depend on: written back as it came.
        case .start, .serverControl, .partInformation, .programDateTime, .bitrate, .dateRange: .keepAsWritten
        // Without these the segments cannot be found or decrypted.
        case .define, .byteRange, .key, .map, .skip: .fail
        // Dropping the rest leaves the media addressable: an EXTINF's segment takes the target duration, a
        // variant's URI line is dropped with it, a sequence number is 0.
        default: .ignore
        }
    }

    /// Whether the tag alone says which kind of playlist it is in (tags such as EXT-X-TARGETDURATION or
    /// EXT-X-SESSION-KEY are found in the other kind in the wild).
    var decidesPlaylistKind: Bool {
        switch self {
        case .extinf, .streamInf, .iFrameStreamInf, .media: true
        default: false
        }
    }

    /// Whether the tag may appear only once in a playlist (RFC 8216bis §4.4: "MUST NOT appear more than once").
    var isSingleInstance: Bool {
        switch self {
        case .extm3u, .version, .independentSegments, .start, .targetDuration, .mediaSequence,
            .discontinuitySequence, .endList, .playlistType, .iFramesOnly, .partInformation, .serverControl, .skip,
            .contentSteering:
            true
        default: false
        }
    }
}

/// What a parse does with a tag whose value cannot be read.
enum TagRecovery {
    /// A warning, and the line kept in place as an unknown tag, so that the package keeps it.
    case keepAsWritten
    /// A warning, and the tag dropped.
    case ignore
    /// An error: the media cannot be addressed or decrypted without the tag.
    case fail
}

/// Media or multivariant.
enum PlaylistKind {
    case media, multivariant

    var name: String { self == .media ? "media" : "multivariant" }
}

/// Finds known tags by the bytes of their names, comparing eight bytes at a time.
struct KnownTagTable {
    private struct Entry {
        let tag: KnownTag
        /// The name as little-endian words, the last one zero-padded.
        let words: [UInt64]
        let name: [UInt8]
    }

    /// Candidates by name length.
    private let byLength: [[Entry]]

    init() {
        var table = [[Entry]](repeating: [], count: 32)
        for tag in KnownTag.allCases {
            let name = Array(tag.name.utf8)
            var words: [UInt64] = []
            for start in stride(from: 0, to: name.count, by: 8) {
                var word: UInt64 = 0
                for (offset, byte) in name[start..<min(start + 8, name.count)].enumerated() {
                    word |= UInt64(byte) << (8 * UInt64(offset))
                }
                words.append(word)
            }
            table[name.count].append(Entry(tag: tag, words: words, name: name))
        }
        byLength = table
    }

    /// The tag whose name is `bytes[range]`, comparing exactly (or ignoring ASCII case when `ignoringCase`).
    func tag(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, ignoringCase: Bool) -> KnownTag? {
        let length = range.count
        guard length > 0, length < byLength.count else { return nil }
        let candidates = byLength[length]
        if candidates.isEmpty { return nil }
        if ignoringCase {
            for candidate in candidates {
                var index = 0
                while index < length {
                    var byte = bytes[range.lowerBound + index]
                    if byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 32 }
                    if byte != candidate.name[index] { break }
                    index += 1
                }
                if index == length { return candidate.tag }
            }
            return nil
        }
        // Load the name once as words (bytes past its end masked off), then compare words.
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { storage in
            storage.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[range]))
        }
        return withUnsafeBytes(of: &words) { loaded in
            for candidate in candidates {
                var index = 0
                while index < candidate.words.count
                    && candidate.words[index] == loaded.load(fromByteOffset: index * 8, as: UInt64.self)
                {
                    index += 1
                }
                if index == candidate.words.count { return candidate.tag }
            }
            return nil
        }
    }
}
