import StreamKitCore
import StreamKitHLS
import Testing

/// The kuu-hls-parser corpus files: RFC 8216bis §8 examples, Low-Latency HLS examples, SCTE-35 cues. All valid;
/// their key facts asserted.
@Suite struct RFCExampleTests {
    private let folder = "kuu-hls-parser/"

    @Test func simpleMediaPlaylist() throws {
        let playlist = try Corpus.media(folder + "8.1-Simple-Media-Playlist.m3u8")
        #expect(playlist.version == 3 && playlist.targetDuration == 10 && playlist.hasEndList)
        #expect(playlist.segments.map(\.duration) == [9.009, 9.009, 3.003])
        #expect(
            playlist.segments.map(\.uri) == [
                "http://media.example.com/first.ts", "http://media.example.com/second.ts",
                "http://media.example.com/third.ts",
            ])
        #expect(abs(playlist.totalDuration - 21.021) < 1e-9)
        #expect(!playlist.isLive)
    }

    @Test func liveMediaPlaylist() throws {
        let playlist = try Corpus.media(folder + "8.2-Live-Media-Playlist_using-HTTPS.m3u8")
        #expect(playlist.mediaSequence == 2680 && playlist.targetDuration == 8)
        #expect(playlist.isLive && !playlist.hasEndList)
        let resolved = playlist.resolvedSegments()
        #expect(resolved.map(\.mediaSequence) == [2680, 2681, 2682])
        #expect(resolved.map(\.duration) == [7.975, 7.941, 7.975])
        #expect(resolved.allSatisfy { $0.keys.isEmpty })
    }

    @Test func encryptedSegmentsUseTheMediaSequenceAsIV() throws {
        let playlist = try Corpus.media(folder + "8.3-Playlist-with-encrypted-Media-Segments.m3u8")
        #expect(playlist.mediaSequence == 7794 && playlist.segments.count == 4)
        let resolved = playlist.resolvedSegments()
        #expect(
            resolved.map { $0.identityKey?.uri } == [
                "https://priv.example.com/key.php?r=52", "https://priv.example.com/key.php?r=52",
                "https://priv.example.com/key.php?r=52", "https://priv.example.com/key.php?r=53",
            ])
        #expect(resolved.allSatisfy { $0.identityKey?.method == .aes128 && $0.identityKey?.isIVExplicit == false })
        #expect(resolved[0].identityKey?.iv == AES128CBC.iv(mediaSequence: 7794))
        #expect(resolved[3].identityKey?.iv == AES128CBC.iv(mediaSequence: 7797))
        #expect(resolved[3].identityKey?.iv == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1E, 0x75])
        #expect(playlist.segments[0].keys.count == 1 && playlist.segments[3].keys.count == 1)
        #expect(playlist.segments[1].keys.isEmpty)
    }

    @Test func multivariantPlaylist() throws {
        let playlist = try Corpus.multivariant(folder + "8.4-Master-Playlist.m3u8")
        #expect(playlist.variants.map(\.bandwidth) == [1_280_000, 2_560_000, 7_680_000, 65_000])
        #expect(playlist.variants.map(\.averageBandwidth) == [1_000_000, 2_000_000, 6_000_000, nil])
        #expect(playlist.variants[0].codecList == ["avc1.640029", "mp4a.40.2"])
        #expect(playlist.variants[3].isAudioOnly)
        #expect(playlist.selectVariant(.best)?.uri == "http://example.com/hi.m3u8")
        #expect(playlist.selectVariant(.worst)?.uri == "http://example.com/low.m3u8")
        // The cap compares AVERAGE-BANDWIDTH when present: mid averages 2,000,000 under a 2.1 Mbit/s cap.
        #expect(playlist.selectVariant(.maximumBandwidth(2_100_000))?.uri == "http://example.com/mid.m3u8")
    }

    @Test func iFramePlaylistsAreListedApart() throws {
        let playlist = try Corpus.multivariant(folder + "8.5-Master-Playlist-with-I-Frames.m3u8")
        #expect(playlist.variants.count == 4)
        #expect(playlist.iFrameVariants.map(\.uri) == ["low/iframe.m3u8", "mid/iframe.m3u8", "hi/iframe.m3u8"])
        #expect(playlist.iFrameVariants.map(\.bandwidth) == [86_000, 150_000, 550_000])
        #expect(playlist.selectVariant(.worst)?.uri == "low/audio-video.m3u8")
        #expect(playlist.selectVariant(.maximumBandwidth(100_000))?.uri == "audio-only.m3u8")
    }

    @Test func alternativeAudio() throws {
        let playlist = try Corpus.multivariant(folder + "8.6-Master-Playlist-with-Alternative-audio.m3u8")
        #expect(playlist.renditions.count == 3 && playlist.variants.count == 4)
        let variant = try #require(playlist.selectVariant(.best))
        let audio = playlist.audioRenditions(for: variant)
        #expect(audio.map(\.name) == ["English", "Deutsch", "Commentary"])
        #expect(audio.map(\.language) == ["en", "de", "en"])
        #expect(audio.map(\.isDefault) == [true, false, false])
        #expect(audio.map(\.autoselect) == [true, true, false])
        #expect(RenditionPreference.automatic.select(from: audio).map(\.name) == ["English"])
        #expect(RenditionPreference.language("de").select(from: audio).map(\.uri) == ["main/german-audio.m3u8"])
        #expect(RenditionPreference.language("eng").select(from: audio).map(\.name) == ["English", "Commentary"])
        #expect(playlist.renditions(named: "commentary").map(\.uri) == ["commentary/audio-only.m3u8"])
        // The commentary block of comments is kept in place, before the first rendition.
        #expect(playlist.extraLines.count == 3 && playlist.extraLines.allSatisfy { $0.position == .beforeRendition(0) })
    }

    @Test func alternativeVideo() throws {
        let playlist = try Corpus.multivariant(folder + "8.7-Master-Playlist-with-Alternative-video.m3u8")
        #expect(playlist.renditions.count == 9 && playlist.variants.count == 3)
        #expect(playlist.renditions.allSatisfy { $0.type == .video })
        let mid = playlist.variants[1]
        #expect(playlist.videoRenditions(for: mid).map(\.name) == ["Main", "Centerfield", "Dugout"])
        #expect(playlist.videoRenditions(for: mid).first { $0.isDefault }?.uri == "mid/centerfield/audio-video.m3u8")
    }

    @Test func sessionData() throws {
        let playlist = try Corpus.multivariant(folder + "8.8-Session-Data-in-a-Master-Playlist.m3u8")
        #expect(playlist.variants.isEmpty)
        #expect(playlist.sessionData.map(\.dataID) == ["com.example.lyrics", "com.example.title", "com.example.title"])
        #expect(playlist.sessionData[0].uri == "lyrics.json" && playlist.sessionData[0].value == nil)
        #expect(playlist.sessionData[2].language == "es" && playlist.sessionData[2].value == "Este es un ejemplo")
    }

    @Test func characteristics() throws {
        let playlist = try Corpus.multivariant(
            folder + "8.9-CHARACTERISTICS-attribute-containing-multiple-characteristics.m3u8")
        #expect(
            playlist.renditions.allSatisfy {
                $0.characteristics == "public.accessibility.transcribes-spoken-dialog,public.easy-to-read"
            })
    }

    @Test func dateRangesCarryingSCTE35() throws {
        let parsed = try Corpus.parse(folder + "8.10-EXT-X-DATERANGE-carrying-SCTE-35-tags.m3u8")
        #expect(parsed.warnings.map(\.line) == [1, 2, 3, 4])  // the commentary before #EXTM3U
        let playlist = try #require(parsed.playlist.media)
        #expect(playlist.segments.count == 6 && playlist.targetDuration == 30)
        let out = try #require(playlist.segments[2].dateRanges.first)
        #expect(out.id == "splice-6FFFFFF0" && out.plannedDuration == 59.993)
        #expect(out.startDate == HLSDateTime("2014-03-05T11:15:00.000Z"))
        #expect(out.scte35Out?.prefix(4) == [0xFC, 0x00, 0x2F, 0x00] && out.scte35Out?.count == 49)
        let back = try #require(playlist.segments[4].dateRanges.first)
        #expect(back.startDate == nil && back.duration == 59.993 && back.scte35In?.count == 44)
        let resolved = playlist.resolvedSegments()
        #expect(resolved[2].programDateTime == HLSDateTime("2014-03-05T11:15:00Z"))
        #expect(resolved[5].programDateTime == HLSDateTime("2014-03-05T11:16:30Z"))
    }

    @Test func cueTagsAreKeptInPlace() throws {
        let playlist = try Corpus.media(folder + "8.11-EXT-X-CUE-OUT-Media-Playlist.m3u8")
        #expect(playlist.segments[1].extraLines == [PlaylistLine("#EXT-X-CUE-OUT:DURATION=15")])
        #expect(playlist.segments[1].extraLines[0].tagName == "EXT-X-CUE-OUT")
        #expect(playlist.segments[1].extraLines[0].tagValue == "DURATION=15")
        let scte = try Corpus.media(folder + "SCTE-35_04.m3u8")
        #expect(scte.segments[1].extraLines.map(\.tagName) == ["EXT-OATCLS-SCTE35", "EXT-X-ASSET", "EXT-X-CUE-OUT"])
        #expect(scte.segments[2].extraLines[0].text.hasSuffix("SCTE35=/DA0AAAA+…AAg+2UBNAAANvrtoQ=="))
        #expect(scte.serialized().contains("#EXT-X-CUE-OUT:DURATION=15\n#EXTINF:8,\n2.ts\n"))
        let curly = try Corpus.media(folder + "SCTE-35_05.m3u8")
        #expect(curly.segments[1].extraLines[0].text.contains("CUE=”/DA0AAAA+…AAg+2UBNAAANvrtoQ==”"))
    }

    @Test func lowLatencyPlaylist() throws {
        let playlist = try Corpus.media(folder + "Low-Latency_Example-01_Low-Latency_HLS_Playlist.m3u8")
        #expect(playlist.version == 6 && playlist.mediaSequence == 266 && playlist.segments.count == 7)
        #expect(playlist.serverControl?.canBlockReload == true && playlist.serverControl?.canSkipUntil == 24)
        #expect(playlist.serverControl?.partHoldBack == 1 && playlist.partInformation?.partTarget == 0.33334)
        #expect(playlist.segments[0].map?.uri == "init.mp4")
        #expect(playlist.segments[5].parts.count == 12 && playlist.segments[6].parts.count == 12)
        #expect(
            playlist.segments[5].parts.filter(\.isIndependent).map(\.uri) == ["filePart271.4.mp4", "filePart271.8.mp4"])
        #expect(
            playlist.pendingSegment.parts.map(\.uri) == ["filePart273.0.mp4", "filePart273.1.mp4", "filePart273.2.mp4"])
        #expect(playlist.preloadHints == [PreloadHint(type: .part, uri: "filePart273.3.mp4")])
        #expect(playlist.renditionReports.map(\.uri) == ["../1M/waitForMSN.php", "../4M/waitForMSN.php"])
        #expect(playlist.renditionReports.map(\.lastMediaSequence) == [273, 273])
        #expect(playlist.renditionReports.map(\.lastPart) == [2, 1])
        let resolved = playlist.resolvedSegments(
            baseURL: "https://example.com/2M/waitForMSN.php?_HLS_msn=273&_HLS_part=2")
        #expect(resolved.last?.mediaSequence == 272)
        #expect(resolved.allSatisfy { $0.map?.uri == "https://example.com/2M/init.mp4" })
        #expect(resolved[5].programDateTime == HLSDateTime("2019-02-14T02:13:56.1064Z"))
        #expect(resolved[6].programDateTime == HLSDateTime("2019-02-14T02:14:00.106Z"))
    }

    @Test func deltaUpdateSkipsSegments() throws {
        let playlist = try Corpus.media(folder + "Low-Latency_Example-02_Playlist_Delta_Update.m3u8")
        #expect(playlist.version == 9 && playlist.skip?.skippedSegments == 3)
        #expect(playlist.segments.count == 4 && playlist.firstListedMediaSequence == 269)
        #expect(playlist.resolvedSegments().map(\.mediaSequence) == [269, 270, 271, 272])
        #expect(playlist.pendingSegment.parts.count == 4)
        #expect(playlist.renditionReports.map(\.lastPart) == [3, 3])
    }

    @Test func byteRangeAddressedParts() throws {
        let first = try Corpus.media(folder + "Low-Latency_Example-03_Byterange-addressed_Parts-01.m3u8")
        #expect(first.segments.count == 2 && first.pendingSegment.parts.count == 3)
        #expect(
            first.pendingSegment.parts.map(\.byteRange) == [
                SegmentByteRange(length: 20_000, offset: 0), SegmentByteRange(length: 23_000, offset: 20_000),
                SegmentByteRange(length: 18_000, offset: 43_000),
            ])
        #expect(first.preloadHints[0].byteRangeStart == 61_000 && first.preloadHints[0].uri == "fileSequence271.mp4")
        let second = try Corpus.media(folder + "Low-Latency_Example-03_Byterange-addressed_Parts-02.m3u8")
        #expect(second.segments.count == 3 && second.segments[2].parts.count == 4)
        #expect(second.segments[2].parts.last?.byteRange == SegmentByteRange(length: 19_000, offset: 61_000))
        #expect(second.preloadHints[0].byteRangeStart == 0)
        let third = try Corpus.media(folder + "Low-Latency_Example-03_Byterange-addressed_Parts-03.m3u8")
        #expect(
            third.pendingSegment.parts == [
                PartialSegment(
                    uri: "fileSequence272.mp4", duration: 1.02, byteRange: SegmentByteRange(length: 21_000, offset: 0))
            ])
        #expect(third.preloadHints[0].byteRangeStart == 21_000)
    }

    @Test func multipleRenditionGroups() throws {
        let playlist = try Corpus.multivariant(folder + "Multiple-rendition-groups.m3u8")
        #expect(playlist.independentSegments && playlist.version == 4)
        #expect(Set(playlist.renditions.map(\.groupID)) == ["aac_high", "aac_mid", "aac_low"])
        let byURI = Dictionary(uniqueKeysWithValues: playlist.variants.map { ($0.uri, $0) })
        #expect(
            playlist.audioRenditions(for: try #require(byURI["540p.m3u8"])).map(\.uri) == [
                "aac_mid_eng.m3u8", "aac_mid_jp.m3u8",
            ])
        #expect(playlist.audioRenditions(for: try #require(byURI["360p.m3u8"])).count == 2)
    }

    @Test func redundantSegmentsWithAByteRange() throws {
        let playlist = try Corpus.media(folder + "RedundantSegments.m3u8")
        #expect(playlist.segments.count == 4)
        #expect(playlist.segments[2].byteRange == SegmentByteRange(length: 128, offset: 256))
        #expect(playlist.resolvedSegments()[2].byteRange == ByteRange(256, 384))
    }

    @Test func scte35CueTags() throws {
        for (file, count) in [("SCTE-35_01", 5), ("SCTE-35_02", 5), ("SCTE-35_03", 5), ("SCTE-35_06", 9)] {
            let playlist = try Corpus.media(folder + file + ".m3u8")
            #expect(playlist.segments.count == count && playlist.playlistType == .vod && playlist.hasEndList)
        }
        let seven = try Corpus.media(folder + "SCTE-35_07.m3u8")
        let range = try #require(seven.segments[4].dateRanges.first)
        #expect(range.endDate == HLSDateTime("2023-10-09T06:17:01.514Z") && range.duration == 60.694)
    }

    @Test func appleStreamingExamples() throws {
        let bipbop = try Corpus.multivariant(folder + "Streaming-Examples_bipbop_16x9_variant.m3u8")
        #expect(bipbop.variants.count == 6 && bipbop.iFrameVariants.count == 5)
        let best = try #require(bipbop.selectVariant(.best))
        #expect(best.resolution == Resolution(width: 1920, height: 1080) && best.uri == "gear5/prog_index.m3u8")
        #expect(
            bipbop.selectVariant(.maximumResolution(Resolution(width: 1280, height: 720)))?.uri
                == "gear4/prog_index.m3u8")
        #expect(bipbop.selectVariant(.worst)?.uri == "gear1/prog_index.m3u8")
        #expect(bipbop.subtitleRenditions(for: best).count == 8)
        #expect(
            RenditionPreference.language("fr").select(from: bipbop.subtitleRenditions(for: best)).map(\.name) == [
                "Français", "Français (Forced)",
            ])
        #expect(bipbop.audioRenditions(for: best).first?.uri == nil)
        let advanced = try Corpus.multivariant(folder + "Streaming-Examples_img_bipbop_adv_example_ts_master.m3u8")
        #expect(advanced.variants.count == 24 && advanced.iFrameVariants.count == 6)
        let variant = try #require(advanced.selectVariant(.best, codecs: ["ec-3"]))
        #expect(variant.audio == "aud3" && variant.averageBandwidth == 8_174_033)
        #expect(advanced.closedCaptionRenditions(for: variant).map(\.instreamID) == ["CC1"])
        #expect(advanced.audioRenditions(for: variant).map(\.channels) == ["6"])
        #expect(advanced.selectVariant(.best, codecs: ["ac-3"])?.bandwidth == 8_399_417)
    }
}
