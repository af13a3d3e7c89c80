import Foundation
import StreamKitHLS
import StreamKitTestSupport
import Testing

/// Every playlist of the corpus either parses (and then round-trips) or fails with a line and a reason.
/// Which files are valid is our judgement, written down here file by file.
@Suite(.background) struct CorpusTests {
    /// Files that parse in the default (lenient) mode. The comment says what the lenient parse tolerates.
    static let valid: Set<String> = [
        // comcast-mamba
        "comcast-mamba/Super8_muxed1_4242.m3u8",
        "comcast-mamba/Super8_muxed2_1376214110461.m3u8",
        "comcast-mamba/Super8_muxed3_HD_VOD_VDS_TELENOVELA_02152016_LVLH08.m3u8",
        "comcast-mamba/bipbopall.m3u8",  // spaces after commas in attribute lists
        "comcast-mamba/hls_ad_master_playlist.m3u8",
        "comcast-mamba/hls_ad_variant_playlist.m3u8",
        "comcast-mamba/hls_master_playlist.m3u8",
        "comcast-mamba/hls_variant_playlist.m3u8",  // CRLF line ends
        "comcast-mamba/hls_variant_playlist_with_daterange_metadata.m3u8",
        "comcast-mamba/linear_ad_insertion_AD.m3u8",
        "comcast-mamba/linear_ad_insertion_CONTENT_end_ad_forced.m3u8",  // 21-digit IV, VERSION 4 with MAP
        "comcast-mamba/linear_ad_insertion_CONTENT_end_ad_natural.m3u8",  // same
        "comcast-mamba/linear_ad_insertion_CONTENT_mid_ad.m3u8",  // same
        "comcast-mamba/linear_ad_insertion_CONTENT_start_ad.m3u8",  // same
        "comcast-mamba/super8demuxed1_4242.m3u8",
        "comcast-mamba/super8demuxed2_IP_1080p24_51_TS.m3u8",
        "comcast-mamba/super8demuxed3_1376214110461.m3u8",
        // grafov-m3u8
        "grafov-m3u8/master-playlist-with-custom-tags.m3u8",
        "grafov-m3u8/master-with-alternatives-b.m3u8",
        "grafov-m3u8/master-with-alternatives.m3u8",
        "grafov-m3u8/master-with-closed-captions-eq-none.m3u8",
        "grafov-m3u8/master-with-hlsv7.m3u8",  // comments before #EXTM3U
        "grafov-m3u8/master-with-independent-segments.m3u8",
        "grafov-m3u8/master-with-multiple-codecs.m3u8",
        "grafov-m3u8/master-with-stream-inf-1.m3u8",
        "grafov-m3u8/master-with-stream-inf-name.m3u8",
        "grafov-m3u8/master.m3u8",
        "grafov-m3u8/media-playlist-large.m3u8",
        "grafov-m3u8/media-playlist-with-byterange.m3u8",
        "grafov-m3u8/media-playlist-with-custom-tags.m3u8",
        "grafov-m3u8/media-playlist-with-discontinuity-seq.m3u8",
        "grafov-m3u8/media-playlist-with-discontinuity.m3u8",  // comments before #EXTM3U
        "grafov-m3u8/media-playlist-with-oatcls-scte35.m3u8",
        "grafov-m3u8/media-playlist-with-program-date-time.m3u8",
        "grafov-m3u8/media-playlist-with-scte35-1.m3u8",
        "grafov-m3u8/media-playlist-with-scte35.m3u8",
        "grafov-m3u8/media-playlist-with-start-time.m3u8",
        "grafov-m3u8/widevine-bitrate.m3u8",
        "grafov-m3u8/widevine-master.m3u8",
        "grafov-m3u8/wowza-master.m3u8",
        "grafov-m3u8/wowza-vod-chunklist.m3u8",
        // kuu-hls-parser: the RFC's section 8 examples, the Low-Latency HLS examples, SCTE-35 cues. All valid.
        "kuu-hls-parser/8.1-Simple-Media-Playlist.m3u8",
        "kuu-hls-parser/8.10-EXT-X-DATERANGE-carrying-SCTE-35-tags.m3u8",  // commentary before #EXTM3U
        "kuu-hls-parser/8.11-EXT-X-CUE-OUT-Media-Playlist.m3u8",
        "kuu-hls-parser/8.2-Live-Media-Playlist_using-HTTPS.m3u8",
        "kuu-hls-parser/8.3-Playlist-with-encrypted-Media-Segments.m3u8",
        "kuu-hls-parser/8.4-Master-Playlist.m3u8",
        "kuu-hls-parser/8.5-Master-Playlist-with-I-Frames.m3u8",
        "kuu-hls-parser/8.6-Master-Playlist-with-Alternative-audio.m3u8",  // commentary before #EXTM3U
        "kuu-hls-parser/8.7-Master-Playlist-with-Alternative-video.m3u8",  // commentary before #EXTM3U
        "kuu-hls-parser/8.8-Session-Data-in-a-Master-Playlist.m3u8",  // commentary before #EXTM3U
        "kuu-hls-parser/8.9-CHARACTERISTICS-attribute-containing-multiple-characteristics.m3u8",  // same
        "kuu-hls-parser/Low-Latency_Example-01_Low-Latency_HLS_Playlist.m3u8",
        "kuu-hls-parser/Low-Latency_Example-02_Playlist_Delta_Update.m3u8",
        "kuu-hls-parser/Low-Latency_Example-03_Byterange-addressed_Parts-01.m3u8",  // unquoted part BYTERANGE
        "kuu-hls-parser/Low-Latency_Example-03_Byterange-addressed_Parts-02.m3u8",  // same
        "kuu-hls-parser/Low-Latency_Example-03_Byterange-addressed_Parts-03.m3u8",  // same
        "kuu-hls-parser/Multiple-rendition-groups.m3u8",
        "kuu-hls-parser/RedundantSegments.m3u8",
        "kuu-hls-parser/SCTE-35_01.m3u8",
        "kuu-hls-parser/SCTE-35_02.m3u8",
        "kuu-hls-parser/SCTE-35_03.m3u8",
        "kuu-hls-parser/SCTE-35_04.m3u8",
        "kuu-hls-parser/SCTE-35_05.m3u8",
        "kuu-hls-parser/SCTE-35_06.m3u8",
        "kuu-hls-parser/SCTE-35_07.m3u8",  // commentary before #EXTM3U
        "kuu-hls-parser/Streaming-Examples_bipbop_16x9_variant.m3u8",
        "kuu-hls-parser/Streaming-Examples_img_bipbop_adv_example_ts_master.m3u8",
        // videojs-m3u8-parser
        "videojs-m3u8-parser/absoluteUris.m3u8",
        "videojs-m3u8-parser/allowCache.m3u8",  // EXT-X-ALLOW-CACHE (removed from the spec) is kept as an unknown tag
        "videojs-m3u8-parser/allowCacheInvalid.m3u8",  // same, its value is not ours to judge
        "videojs-m3u8-parser/alternateAudio.m3u8",  // spaces in attribute lists
        "videojs-m3u8-parser/alternateVideo.m3u8",
        "videojs-m3u8-parser/brightcove.m3u8",
        "videojs-m3u8-parser/dateTime.m3u8",  // EXTINF without a comma
        "videojs-m3u8-parser/diff-init-key.m3u8",
        "videojs-m3u8-parser/disallowCache.m3u8",
        "videojs-m3u8-parser/disc-sequence.m3u8",
        "videojs-m3u8-parser/discontinuity.m3u8",
        "videojs-m3u8-parser/domainUris.m3u8",
        "videojs-m3u8-parser/emptyAllowCache.m3u8",
        "videojs-m3u8-parser/encrypted.m3u8",
        "videojs-m3u8-parser/event.m3u8",
        "videojs-m3u8-parser/fmp4.m3u8",  // trailing tabs
        "videojs-m3u8-parser/headerOnly.m3u8",  // an empty media playlist without EXT-X-TARGETDURATION
        "videojs-m3u8-parser/iFramePlaylist.m3u8",
        "videojs-m3u8-parser/iFramesOnly.m3u8",
        "videojs-m3u8-parser/invalidAllowCache.m3u8",
        "videojs-m3u8-parser/liveStart30sBefore.m3u8",  // durations over the target duration
        "videojs-m3u8-parser/llhls.m3u8",
        "videojs-m3u8-parser/llhlsDelta.m3u8",  // unquoted RECENTLY-REMOVED-DATERANGES
        "videojs-m3u8-parser/manifestExtXEndlistEarly.m3u8",  // EXT-X-ENDLIST may occur anywhere (§4.4.3.4)
        "videojs-m3u8-parser/master-fmp4.m3u8",
        "videojs-m3u8-parser/master.m3u8",  // a comment before #EXTM3U, a space in an attribute list
        "videojs-m3u8-parser/media.m3u8",
        "videojs-m3u8-parser/mediaSequence.m3u8",  // decimal durations without EXT-X-VERSION 3
        "videojs-m3u8-parser/missingEndlist.m3u8",
        "videojs-m3u8-parser/missingMediaSequence.m3u8",  // same
        "videojs-m3u8-parser/multipleAudioGroups.m3u8",  // spaces in attribute lists
        "videojs-m3u8-parser/multipleAudioGroupsCombinedMain.m3u8",  // same
        "videojs-m3u8-parser/multipleVideo.m3u8",  // lines holding one space
        "videojs-m3u8-parser/playlist.m3u8",  // trailing tabs
        "videojs-m3u8-parser/playlistMediaSequenceHigher.m3u8",  // decimal durations without EXT-X-VERSION 3
        "videojs-m3u8-parser/whiteSpace.m3u8",  // whitespace around URIs, whitespace-only line
        "videojs-m3u8-parser/zeroDuration.m3u8",
        // Broken in ways the lenient parse reads past (docs/CLI.md, "How playlists are read").
        "comcast-mamba/hls_master_playlist_sap.m3u8",  // EXT-X-STREAM-INF tags with no URI lines: variants ignored
        "grafov-m3u8/master-with-i-frame-stream-inf.m3u8",  // BANDWIDTH=INVALIDBW: that I-frame variant ignored
        "grafov-m3u8/media-playlist-with-cue-out-in-without-oatcls.m3u8",  // ends with an EXTINF and no URI
        "videojs-m3u8-parser/emptyMediaSequence.m3u8",  // an empty EXT-X-MEDIA-SEQUENCE, ignored
        "videojs-m3u8-parser/emptyPlaylistType.m3u8",  // an empty EXT-X-PLAYLIST-TYPE, ignored
        "videojs-m3u8-parser/emptyTargetDuration.m3u8",  // EXT-X-TARGETDURATION in a multivariant playlist, ignored
        "videojs-m3u8-parser/extXPlaylistTypeInvalidPlaylist.m3u8",  // EXT-X-PLAYLIST-TYPE:STRING, ignored
        "videojs-m3u8-parser/extinf.m3u8",  // an unreadable EXTINF: the segment takes the target duration
        "videojs-m3u8-parser/invalidMediaSequence.m3u8",  // an unreadable EXT-X-MEDIA-SEQUENCE, ignored
        "videojs-m3u8-parser/invalidPlaylistType.m3u8",  // an unknown EXT-X-PLAYLIST-TYPE, ignored
        "videojs-m3u8-parser/invalidTargetDuration.m3u8",  // EXT-X-TARGETDURATION:NaN, ignored
        "videojs-m3u8-parser/liveMissingSegmentDuration.m3u8",  // URI lines without EXTINF take the target duration
        "videojs-m3u8-parser/llhls-delta-byte-range.m3u8",  // a second EXTINF before one URI line, ignored
        "videojs-m3u8-parser/manifestExtTTargetdurationNegative.m3u8",  // a negative EXT-X-TARGETDURATION, ignored
        "videojs-m3u8-parser/missingExtinf.m3u8",  // URI lines without EXTINF take the target duration
        "videojs-m3u8-parser/missingSegmentDuration.m3u8",  // same
        "videojs-m3u8-parser/multipleTargetDurations.m3u8",  // same, and a second EXT-X-TARGETDURATION, ignored
        "videojs-m3u8-parser/negativeMediaSequence.m3u8",  // EXT-X-MEDIA-SEQUENCE:-11, read as 0
        "videojs-m3u8-parser/streamInfInvalid.m3u8",  // EXT-X-STREAM-INF without BANDWIDTH, read as 0
        "videojs-m3u8-parser/twoMediaSequences.m3u8",  // a second EXT-X-MEDIA-SEQUENCE, ignored
        "videojs-m3u8-parser/versionInvalid.m3u8",  // EXT-X-VERSION:NaN, ignored
    ]

    /// Files that also pass strict mode: no violation at all.
    static let strictlyValid: Set<String> = [
        "comcast-mamba/Super8_muxed1_4242.m3u8", "comcast-mamba/Super8_muxed2_1376214110461.m3u8",
        "comcast-mamba/Super8_muxed3_HD_VOD_VDS_TELENOVELA_02152016_LVLH08.m3u8",
        "comcast-mamba/hls_ad_master_playlist.m3u8", "comcast-mamba/hls_ad_variant_playlist.m3u8",
        "comcast-mamba/hls_master_playlist.m3u8", "comcast-mamba/hls_variant_playlist.m3u8",
        "comcast-mamba/hls_variant_playlist_with_daterange_metadata.m3u8", "comcast-mamba/linear_ad_insertion_AD.m3u8",
        "comcast-mamba/super8demuxed1_4242.m3u8", "comcast-mamba/super8demuxed2_IP_1080p24_51_TS.m3u8",
        "comcast-mamba/super8demuxed3_1376214110461.m3u8",
        "grafov-m3u8/master-playlist-with-custom-tags.m3u8", "grafov-m3u8/master-with-alternatives-b.m3u8",
        "grafov-m3u8/master-with-alternatives.m3u8", "grafov-m3u8/master-with-closed-captions-eq-none.m3u8",
        "grafov-m3u8/master-with-independent-segments.m3u8", "grafov-m3u8/master-with-multiple-codecs.m3u8",
        "grafov-m3u8/master-with-stream-inf-1.m3u8", "grafov-m3u8/master-with-stream-inf-name.m3u8",
        "grafov-m3u8/master.m3u8", "grafov-m3u8/media-playlist-large.m3u8",
        "grafov-m3u8/media-playlist-with-byterange.m3u8", "grafov-m3u8/media-playlist-with-custom-tags.m3u8",
        "grafov-m3u8/media-playlist-with-discontinuity-seq.m3u8", "grafov-m3u8/media-playlist-with-oatcls-scte35.m3u8",
        "grafov-m3u8/media-playlist-with-program-date-time.m3u8", "grafov-m3u8/media-playlist-with-scte35-1.m3u8",
        "grafov-m3u8/media-playlist-with-scte35.m3u8", "grafov-m3u8/media-playlist-with-start-time.m3u8",
        "grafov-m3u8/widevine-bitrate.m3u8", "grafov-m3u8/widevine-master.m3u8", "grafov-m3u8/wowza-master.m3u8",
        "grafov-m3u8/wowza-vod-chunklist.m3u8",
        "kuu-hls-parser/8.1-Simple-Media-Playlist.m3u8", "kuu-hls-parser/8.11-EXT-X-CUE-OUT-Media-Playlist.m3u8",
        "kuu-hls-parser/8.2-Live-Media-Playlist_using-HTTPS.m3u8",
        "kuu-hls-parser/8.3-Playlist-with-encrypted-Media-Segments.m3u8", "kuu-hls-parser/8.4-Master-Playlist.m3u8",
        "kuu-hls-parser/8.5-Master-Playlist-with-I-Frames.m3u8",
        "kuu-hls-parser/Low-Latency_Example-01_Low-Latency_HLS_Playlist.m3u8",
        "kuu-hls-parser/Low-Latency_Example-02_Playlist_Delta_Update.m3u8",
        "kuu-hls-parser/Multiple-rendition-groups.m3u8", "kuu-hls-parser/RedundantSegments.m3u8",
        "kuu-hls-parser/SCTE-35_01.m3u8", "kuu-hls-parser/SCTE-35_02.m3u8", "kuu-hls-parser/SCTE-35_03.m3u8",
        "kuu-hls-parser/SCTE-35_04.m3u8", "kuu-hls-parser/SCTE-35_05.m3u8", "kuu-hls-parser/SCTE-35_06.m3u8",
        "kuu-hls-parser/Streaming-Examples_bipbop_16x9_variant.m3u8",
        "kuu-hls-parser/Streaming-Examples_img_bipbop_adv_example_ts_master.m3u8",
        "videojs-m3u8-parser/absoluteUris.m3u8", "videojs-m3u8-parser/allowCache.m3u8",
        "videojs-m3u8-parser/allowCacheInvalid.m3u8", "videojs-m3u8-parser/alternateVideo.m3u8",
        "videojs-m3u8-parser/brightcove.m3u8", "videojs-m3u8-parser/diff-init-key.m3u8",
        "videojs-m3u8-parser/disallowCache.m3u8", "videojs-m3u8-parser/disc-sequence.m3u8",
        "videojs-m3u8-parser/discontinuity.m3u8", "videojs-m3u8-parser/domainUris.m3u8",
        "videojs-m3u8-parser/emptyAllowCache.m3u8", "videojs-m3u8-parser/encrypted.m3u8",
        "videojs-m3u8-parser/event.m3u8", "videojs-m3u8-parser/iFramePlaylist.m3u8",
        "videojs-m3u8-parser/iFramesOnly.m3u8", "videojs-m3u8-parser/invalidAllowCache.m3u8",
        "videojs-m3u8-parser/llhls.m3u8", "videojs-m3u8-parser/manifestExtXEndlistEarly.m3u8",
        "videojs-m3u8-parser/master-fmp4.m3u8", "videojs-m3u8-parser/media.m3u8",
        "videojs-m3u8-parser/missingEndlist.m3u8", "videojs-m3u8-parser/zeroDuration.m3u8",
    ]

    /// Files broken in ways the lenient parse reads past, with the line and a part of the warning that says so
    /// (strict mode fails on them, naming the same line).
    static let tolerated: [String: (line: Int, reason: String)] = [
        "comcast-mamba/hls_master_playlist_sap.m3u8": (6, "EXT-X-STREAM-INF is not followed by a URI line"),
        "grafov-m3u8/master-with-i-frame-stream-inf.m3u8": (
            13, "BANDWIDTH is not a decimal integer: 'INVALIDBW'; the tag is ignored"
        ),
        "grafov-m3u8/media-playlist-with-cue-out-in-without-oatcls.m3u8": (
            136, "kept as written, as a segment still being written"
        ),
        "videojs-m3u8-parser/emptyMediaSequence.m3u8": (
            3, "EXT-X-MEDIA-SEQUENCE is not a decimal integer: ''; the tag is ignored"
        ),
        "videojs-m3u8-parser/emptyPlaylistType.m3u8": (2, "EXT-X-PLAYLIST-TYPE must be EVENT or VOD, not ''"),
        "videojs-m3u8-parser/emptyTargetDuration.m3u8": (2, "EXT-X-TARGETDURATION belongs in a media playlist"),
        "videojs-m3u8-parser/extXPlaylistTypeInvalidPlaylist.m3u8": (2, "must be EVENT or VOD, not 'STRING'"),
        "videojs-m3u8-parser/extinf.m3u8": (9, "EXTINF duration is not a decimal number: ';asljasdfii11)))00'"),
        "videojs-m3u8-parser/invalidMediaSequence.m3u8": (3, "EXT-X-MEDIA-SEQUENCE is not a decimal integer"),
        "videojs-m3u8-parser/invalidPlaylistType.m3u8": (2, "must be EVENT or VOD, not 'asdRASDfasdR'"),
        "videojs-m3u8-parser/invalidTargetDuration.m3u8": (2, "EXT-X-TARGETDURATION is not a decimal integer: 'NaN'"),
        "videojs-m3u8-parser/liveMissingSegmentDuration.m3u8": (8, "its duration is taken as the target duration"),
        "videojs-m3u8-parser/llhls-delta-byte-range.m3u8": (8, "a second EXTINF before the segment's URI line"),
        "videojs-m3u8-parser/manifestExtTTargetdurationNegative.m3u8": (2, "not a decimal integer: '-10'"),
        "videojs-m3u8-parser/missingExtinf.m3u8": (8, "URI line without an EXTINF tag"),
        "videojs-m3u8-parser/missingSegmentDuration.m3u8": (8, "URI line without an EXTINF tag"),
        "videojs-m3u8-parser/multipleTargetDurations.m3u8": (2, "URI line without an EXTINF tag"),
        "videojs-m3u8-parser/negativeMediaSequence.m3u8": (3, "EXT-X-MEDIA-SEQUENCE is negative: '-11'; read as 0"),
        "videojs-m3u8-parser/streamInfInvalid.m3u8": (3, "EXT-X-STREAM-INF needs BANDWIDTH; read as 0"),
        "videojs-m3u8-parser/twoMediaSequences.m3u8": (4, "EXT-X-MEDIA-SEQUENCE appears again (first at line 3)"),
        "videojs-m3u8-parser/versionInvalid.m3u8": (3, "EXT-X-VERSION is not a positive decimal integer: 'NaN'"),
    ]

    /// Files whose media cannot be addressed, with the line and a part of the reason of the error that stops a
    /// lenient parse.
    static let invalid: [String: (line: Int, reason: String)] = [
        "videojs-m3u8-parser/byteRange.m3u8": (12, "EXT-X-BYTERANGE has no offset, and the previous segment is not"),
        "videojs-m3u8-parser/empty.m3u8": (1, "the playlist is empty"),
        "videojs-m3u8-parser/llhls-byte-range.m3u8": (7, "EXT-X-BYTERANGE must be <length>[@<offset>], not '587500@'"),
        "videojs-m3u8-parser/manifestNoExtM3u.m3u8": (1, "the playlist does not start with #EXTM3U"),
        "videojs-m3u8-parser/start.m3u8": (1, "the playlist does not start with #EXTM3U"),
    ]

    @Test func everyCorpusFileIsJudgedExactlyOnce() throws {
        let files = try Corpus.allFiles()
        #expect(files.count == 131)
        #expect(Set(files) == Self.valid.union(Self.invalid.keys))
        #expect(Self.valid.isDisjoint(with: Self.invalid.keys))
        #expect(Self.strictlyValid.isSubset(of: Self.valid))
        #expect(Set(Self.tolerated.keys).isSubset(of: Self.valid.subtracting(Self.strictlyValid)))
        for folder in ["comcast-mamba", "grafov-m3u8", "kuu-hls-parser", "videojs-m3u8-parser"] {
            #expect(
                FileManager.default.fileExists(atPath: Corpus.root.appendingPathComponent("\(folder)/LICENSE").path))
        }
    }

    @Test(arguments: Array(valid).sorted())
    func validFilesParseAndRoundTrip(file: String) throws {
        let parsed = try Corpus.parse(file)
        #expect(parsed.warnings.isEmpty == Self.strictlyValid.contains(file), "\(parsed.warnings)")
        for warning in parsed.warnings { #expect(warning.line >= 1 && !warning.reason.isEmpty) }
        let written = parsed.playlist.serialized()
        let again = try Playlist.parse(written)
        #expect(again.playlist == parsed.playlist, "round trip changed \(file):\n\(written)")
        #expect(again.warnings.isEmpty || !Self.strictlyValid.contains(file))
        #expect(again.playlist.serialized() == written)
        // In pieces, the same text: each piece ends with a line, and none but the last is short.
        if case .media(let media) = parsed.playlist {
            for chunkSize in [1, 200, 1 << 20] {
                var pieces: [[UInt8]] = []
                media.serialized(chunkSize: chunkSize) { pieces.append($0) }
                #expect(
                    String(decoding: pieces.joined(), as: UTF8.self) == written, "\(file) in \(chunkSize)-byte pieces")
                #expect(pieces.allSatisfy { $0.last == 0x0A })
                #expect(pieces.dropLast().allSatisfy { $0.count >= chunkSize })
            }
        }
    }

    @Test(arguments: Array(valid).sorted())
    func strictModePassesOnlyStrictlyValidFilesAndNamesEveryViolation(file: String) throws {
        let lenient = try Corpus.parse(file)
        do {
            let strict = try Corpus.parse(file, options: .strict)
            #expect(Self.strictlyValid.contains(file))
            #expect(strict.playlist == lenient.playlist && strict.warnings.isEmpty)
        } catch let error as PlaylistError {
            #expect(!Self.strictlyValid.contains(file))
            // Strict mode reports every problem the lenient parse tolerated, at the same lines.
            #expect(error.diagnostics == lenient.warnings.sorted { $0.line < $1.line })
        }
    }

    @Test(arguments: Array(tolerated.keys).sorted())
    func toleratedFilesWarnWithLineAndReason(file: String) throws {
        let expected = try #require(Self.tolerated[file])
        let warnings = try Corpus.parse(file).warnings
        #expect(
            warnings.contains { $0.line == expected.line && $0.reason.contains(expected.reason) }, "\(warnings)")
        let strict = try #require(throws: PlaylistError.self) { try Corpus.parse(file, options: .strict) }
        #expect(strict.diagnostics.contains { $0.line == expected.line && $0.reason.contains(expected.reason) })
    }

    @Test(arguments: Array(invalid.keys).sorted())
    func invalidFilesFailWithLineAndReason(file: String) throws {
        let expected = try #require(Self.invalid[file])
        let error = try #require(throws: PlaylistError.self) { try Corpus.parse(file) }
        #expect(error.line == expected.line, "\(error)")
        #expect(error.reason.contains(expected.reason), "\(error)")
        #expect(error.diagnostics.count == 1)
        #expect("\(error)".hasPrefix("line \(expected.line): "))
        let strict = try #require(throws: PlaylistError.self) { try Corpus.parse(file, options: .strict) }
        #expect(strict.diagnostics.contains(error.diagnostics[0]))
    }
}
