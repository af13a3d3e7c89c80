import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// The pure parts of a package: names, plans, local playlists, pieces, live windows, estimates.
@Suite struct PackagePlanTests {
    private func media(_ text: String) throws -> MediaPlaylist {
        let parsed = try Playlist.parse(text)
        return try #require(parsed.playlist.media)
    }

    private func plan(
        _ text: String, base: String = "https://cdn.example.com/show/v/index.m3u8", decrypt: Bool = false,
        shared: Bool = true, role: RenditionRole = .main
    ) throws -> (files: [PlannedFile], segments: [RecordedSegment], playlist: MediaPlaylist) {
        let playlist = try media(text)
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: role, decrypt: decrypt, sharesRangedFiles: shared)
        let entries = Array(zip(playlist.segments, playlist.resolvedSegments(baseURL: base)))
        let (files, segments) = try planner.plan(entries, playlistURL: base)
        return (files, Array(segments), playlist)
    }

    @Test func segmentsAreNamedBySequenceNumberNeverByTheNetwork() throws {
        let (files, segments, _) = try plan(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:41
            #EXTINF:4,
            ../../../../etc/passwd
            #EXTINF:4,
            /abs/..%2F..%2Fevil name.ts?x=1
            #EXTINF:4,
            seg.php?id=7
            #EXT-X-ENDLIST
            """)
        #expect(files.map(\.path) == ["video/00041.ts", "video/00042.ts", "video/00043.ts"])
        #expect(
            files.map(\.url) == [
                "https://cdn.example.com/etc/passwd", "https://cdn.example.com/abs/..%2F..%2Fevil%20name.ts?x=1",
                "https://cdn.example.com/show/v/seg.php?id=7",
            ])
        #expect(segments.map(\.local.uri) == ["00041.ts", "00042.ts", "00043.ts"])
        #expect(files.allSatisfy { PackageLayout.isContained($0.path) })
    }

    @Test(arguments: [
        "file:///etc/passwd", "ftp://example.com/a.ts", "javascript:alert(1)", "data:video/mp2t;base64,AAAA",
        "http:///no-host.ts", "gopher://x/1",
    ])
    func otherSchemesAreRefused(uri: String) throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\n\(uri)\n#EXT-X-ENDLIST\n"
        #expect(throws: HLSDownloadError(.unsupportedURI)) { try plan(text) }
        do {
            _ = try plan(text)
        } catch let error as HLSDownloadError {
            #expect(error.url == uri && error.description.contains("not an http or https URL"))
        }
    }

    @Test func byteRangesOfOneResourceShareOneLocalFileAtTheSameOffsets() throws {
        let (files, segments, _) = try plan(
            """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="main.mp4",BYTERANGE="700@0"
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000@700
            main.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:1200
            main.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:800@5000
            main.mp4
            #EXT-X-ENDLIST
            """)
        #expect(files.count == 1)
        let file = try #require(files.first)
        #expect(file.path == "video/media-0.mp4" && !file.rebased && file.units == 4)
        #expect(file.parts == [ByteRange(0, 700), ByteRange(700, 1700), ByteRange(1700, 2900), ByteRange(5000, 5800)])
        #expect(
            segments.map(\.local) == [
                LocalReference(uri: "media-0.mp4", range: ByteRange(700, 1700)),
                LocalReference(uri: "media-0.mp4", range: ByteRange(1700, 2900)),
                LocalReference(uri: "media-0.mp4", range: ByteRange(5000, 5800)),
            ])
        #expect(segments.allSatisfy { $0.localMap == LocalReference(uri: "media-0.mp4", range: ByteRange(0, 700)) })
        let local = PlaylistComposer.compose(
            segments, header: MediaPlaylistHeader(try media("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n")),
            target: .local)
        #expect(
            local.serialized() == """
                #EXTM3U
                #EXT-X-VERSION:7
                #EXT-X-TARGETDURATION:2
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-PLAYLIST-TYPE:VOD
                #EXT-X-MAP:URI="media-0.mp4",BYTERANGE="700@0"
                #EXTINF:2,
                #EXT-X-BYTERANGE:1000@700
                media-0.mp4
                #EXTINF:2,
                #EXT-X-BYTERANGE:1200@1700
                media-0.mp4
                #EXTINF:2,
                #EXT-X-BYTERANGE:800@5000
                media-0.mp4
                #EXT-X-ENDLIST

                """)
    }

    @Test func adjacentRangesMergeIntoOneRequestAndLongRunsAreShared() {
        let parts = (0..<10).map { ByteRange(Int64($0) * 100, Int64($0) * 100 + 100) } + [ByteRange(5000, 5100)]
        // Small: everything adjacent is one request; the far range is its own.
        let merged = RangePiecePlanner.pieces(parts: parts, connections: 8, minimumPieceBytes: 1 << 20)
        #expect(merged.map(\.range) == [ByteRange(0, 1000), ByteRange(5000, 5100)])
        #expect(merged.map(\.units) == [10, 1])
        // Large enough to share: cut at range boundaries into about total/connections.
        let shared = RangePiecePlanner.pieces(parts: parts, connections: 4, minimumPieceBytes: 200)
        #expect(
            shared.map(\.range) == [
                ByteRange(0, 300), ByteRange(300, 600), ByteRange(600, 900), ByteRange(900, 1000),
                ByteRange(5000, 5100),
            ])
        #expect(shared.map(\.units).reduce(0, +) == 11)
        // Overlapping ranges (a map inside the first segment's bytes) stay in one piece.
        let overlapping = RangePiecePlanner.pieces(
            parts: [ByteRange(0, 100), ByteRange(50, 300), ByteRange(300, 400)], connections: 4, minimumPieceBytes: 1)
        #expect(overlapping.map(\.range) == [ByteRange(0, 300), ByteRange(300, 400)])
        #expect(overlapping.map(\.units) == [2, 1])
    }

    @Test func keysAreStoredAndRewrittenAndDecryptDropsAES128AndSampleAES() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:5
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k1?t=secret"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://drm/asset",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXTINF:2,
            a.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k2.bin",IV=0x000102030405060708090a0b0c0d0e0f
            #EXTINF:2,
            b.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:2,
            c.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k3.bin"
            #EXTINF:2,
            d.ts
            #EXT-X-ENDLIST
            """
        let kept = try plan(text)
        #expect(
            kept.files.filter { $0.kind == .key }.map(\.path) == [
                "video/key-0.key", "video/key-1.key", "video/key-2.key",
            ])
        #expect(
            kept.files.filter { $0.kind == .key }.map(\.url) == [
                "https://keys.example.com/k1?t=secret", "https://cdn.example.com/show/v/k2.bin",
                "https://cdn.example.com/show/v/k3.bin",
            ])
        let header = MediaPlaylistHeader(kept.playlist)
        let local = PlaylistComposer.compose(kept.segments, header: header, target: .local).serialized()
        #expect(local.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key-0.key\"\n"))
        #expect(local.contains("KEYFORMAT=\"com.apple.streamingkeydelivery\""))
        #expect(local.contains("URI=\"skd://drm/asset\""))
        #expect(local.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key-1.key\",IV=0x000102030405060708090A0B0C0D0E0F"))
        #expect(local.contains("#EXT-X-KEY:METHOD=NONE\n#EXTINF:2,\n00009.ts"))
        #expect(local.contains("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"key-2.key\"\n#EXTINF:2,\n00010.ts"))
        #expect(!local.contains("keys.example.com") && !local.contains("secret"))
        #expect(kept.files.allSatisfy { $0.decryption == nil })

        let decrypted = try plan(text, decrypt: true)
        let segmentFiles = decrypted.files.filter { $0.kind == .segment }
        #expect(
            segmentFiles[0].decryption == Decryption(keyPath: "video/key-0.key", iv: AES128CBC.iv(mediaSequence: 7)))
        #expect(segmentFiles[1].decryption?.iv == Hex.decode("000102030405060708090a0b0c0d0e0f"))
        #expect(segmentFiles[2].decryption == nil)
        #expect(
            segmentFiles[3].decryption
                == Decryption(keyPath: "video/key-2.key", iv: AES128CBC.iv(mediaSequence: 10), scheme: .sampleAES))
        let clear = PlaylistComposer.compose(decrypted.segments, header: header, target: .local).serialized()
        #expect(!clear.contains("METHOD=AES-128") && !clear.contains("key-2.key"))
        // A DRM key (not identity) is no key of ours: it stays as written.
        #expect(clear.contains("skd://drm/asset"))
    }

    /// SAMPLE-AES with a map is fMP4 `cbcs`: with `--decrypt` the segment is decrypted as its map
    /// declares, the map is rewritten clear, and the segment keeps no key; without `--decrypt` it is
    /// planned as before, encrypted under its key.
    @Test func decryptPlansSampleAESWithAMapAsFragmentedMP4() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k.bin"
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:2,
            a.m4s
            #EXT-X-ENDLIST
            """
        #expect(try plan(text).files.allSatisfy { $0.decryption == nil })
        let (files, segments, _) = try plan(text, decrypt: true)
        let segment = try #require(files.first { $0.kind == .segment })
        #expect(
            segment.decryption?.scheme
                == .sampleAESMP4(initURL: "https://cdn.example.com/show/v/init.mp4", initRange: nil))
        #expect(files.first { $0.kind == .map }?.decryption?.scheme == .clearMP4Init)
        #expect(segments.first?.localKeys.isEmpty == true)
    }

    @Test func mapsThatChangeMidPlaylistEachGetAFile() throws {
        let (files, segments, playlist) = try plan(
            """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="init-a.mp4"
            #EXTINF:2,
            a1.m4s
            #EXTINF:2,
            a2.m4s
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="init-b.mp4"
            #EXTINF:2,
            b1.m4s
            #EXT-X-MAP:URI="init-a.mp4"
            #EXTINF:2,
            a3.m4s
            #EXT-X-ENDLIST
            """)
        #expect(files.filter { $0.kind == .map }.map(\.path) == ["video/init-0.mp4", "video/init-1.mp4"])
        #expect(segments.map(\.localMap?.uri) == ["init-0.mp4", "init-0.mp4", "init-1.mp4", "init-0.mp4"])
        #expect(segments.map(\.local.uri) == ["00000.m4s", "00001.m4s", "00002.m4s", "00003.m4s"])
        let local = PlaylistComposer.compose(segments, header: MediaPlaylistHeader(playlist), target: .local)
            .serialized()
        #expect(local.components(separatedBy: "#EXT-X-MAP").count == 4)
        #expect(local.contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init-1.mp4\""))
    }

    @Test func localPlaylistsKeepDatesDiscontinuitiesGapsAndUnknownTags() throws {
        let (_, segments, playlist) = try plan(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-INDEPENDENT-SEGMENTS
            #X-VENDOR-HEADER:1
            #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:00.000Z
            #EXTINF:6,first
            a.ts
            #EXT-X-CUE-OUT:30
            #EXTINF:6,
            b.ts
            #EXT-X-GAP
            #EXTINF:6,
            c.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2024-05-01T11:00:00.000Z
            #EXTINF:5.5,
            d.ts
            """)
        var recorded = segments
        recorded[1].skipped = true
        // The RFC gap form; GapFormComposerTests has the default one.
        let local = PlaylistComposer.compose(
            recorded, header: MediaPlaylistHeader(playlist), target: .local, gaps: .tagged)
        #expect(
            local.serialized() == """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-TARGETDURATION:6
                #EXT-X-MEDIA-SEQUENCE:100
                #EXT-X-DISCONTINUITY-SEQUENCE:3
                #EXT-X-PLAYLIST-TYPE:VOD
                #EXT-X-INDEPENDENT-SEGMENTS
                #X-VENDOR-HEADER:1
                #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:00.000Z
                #EXTINF:6,first
                00100.ts
                #EXT-X-CUE-OUT:30
                #EXT-X-GAP
                #EXTINF:6,
                00101.ts
                #EXT-X-GAP
                #EXTINF:6,
                00102.ts
                #EXT-X-DISCONTINUITY
                #EXT-X-PROGRAM-DATE-TIME:2024-05-01T11:00:00.000Z
                #EXTINF:5.5,
                00103.ts
                #EXT-X-ENDLIST

                """)
        // The recorded source keeps absolute URIs and no skipped gaps, and plans the same again.
        let source = PlaylistComposer.compose(recorded, header: MediaPlaylistHeader(playlist), target: .source)
        #expect(source.segments.map(\.uri).allSatisfy { $0.hasPrefix("https://cdn.example.com/show/v/") })
        #expect(source.segments.map(\.isGap) == [false, false, true, false])
        let replanned = try plan(source.serialized(), base: "unused")
        #expect(replanned.segments.map(\.local) == segments.map(\.local))
        #expect(replanned.files.map(\.path) == ["video/00100.ts", "video/00101.ts", "video/00103.ts"])
    }

    @Test func aResourceListedTwiceIsOneFileInVODAndTwoInALiveRecording() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXTINF:4,
            a.ts
            #EXTINF:4,
            b.ts
            #EXTINF:4,
            a.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x00000000000000000000000000000001
            #EXTINF:4,
            a.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x00000000000000000000000000000002
            #EXTINF:4,
            a.ts
            #EXT-X-ENDLIST
            """
        let vod = try plan(text, decrypt: true)
        // The third is the first; the fourth and fifth are decrypted with other IVs: files of their own.
        #expect(
            vod.segments.map(\.file) == [
                "video/00000.ts", "video/00001.ts", "video/00000.ts", "video/00003.ts", "video/00004.ts",
            ])
        #expect(
            vod.files.filter { $0.kind == .segment }.map(\.path) == [
                "video/00000.ts", "video/00001.ts", "video/00003.ts", "video/00004.ts",
            ])
        #expect(vod.segments[2].local == LocalReference(uri: "00000.ts", range: nil))
        let live = try plan(text, decrypt: true, shared: false)
        #expect(live.segments.map(\.file) == (0..<5).map { "video/0000\($0).ts" })
    }

    @Test func segmentsUnderTheSameKeysAndMapShareOneContext() throws {
        let (_, segments, _) = try plan(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:4,
            a.m4s
            #EXTINF:4,
            b.m4s
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k1",KEYFORMAT="com.example.drm"
            #EXTINF:4,
            c.m4s
            #EXTINF:4,
            d.m4s
            #EXT-X-ENDLIST
            """)
        #expect(segments[0].resolved.context === segments[1].resolved.context)
        #expect(segments[2].resolved.context === segments[3].resolved.context)
        #expect(segments[1].resolved.context !== segments[2].resolved.context)
        #expect(segments.allSatisfy { $0.mapFile == "video/init-0.mp4" })
        #expect(
            segments[0].localKeys.isEmpty && segments[3].localKeys.map(\.uri) == ["https://cdn.example.com/show/v/k1"])
    }

    @Test func decryptedByteRangeSegmentsBecomeFilesOfTheirOwn() throws {
        let (files, segments, _) = try plan(
            """
            #EXTM3U
            #EXT-X-VERSION:4
            #EXT-X-TARGETDURATION:2
            #EXT-X-KEY:METHOD=AES-128,URI="key"
            #EXTINF:2,
            #EXT-X-BYTERANGE:1024@0
            all.ts
            #EXTINF:2,
            #EXT-X-BYTERANGE:2048
            all.ts
            #EXT-X-ENDLIST
            """, decrypt: true)
        let segmentFiles = files.filter { $0.kind == .segment }
        #expect(segmentFiles.map(\.path) == ["video/00000.ts", "video/00001.ts"])
        #expect(segmentFiles.map(\.parts) == [[ByteRange(0, 1024)], [ByteRange(1024, 3072)]])
        #expect(segmentFiles.allSatisfy { $0.rebased })
        #expect(segments.map(\.local.range) == [nil, nil])
    }

    @Test func liveWindowsTakeEachSequenceOnceUpToTheLimitAndMarkMissedSegments() throws {
        func window(_ first: UInt64, count: Int) throws -> [(segment: MediaSegment, resolved: ResolvedSegment)] {
            var text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
            for index in 0..<count { text += "#EXTINF:2,\ns\(first + UInt64(index)).ts\n" }
            let playlist = try media(text)
            return Array(zip(playlist.segments, playlist.resolvedSegments(baseURL: "http://h/live.m3u8")))
        }
        let first = LiveWindow.take(try window(10, count: 5), after: nil, recordedDuration: 0, limit: 7)
        #expect(first.entries.map(\.resolved.mediaSequence) == [10, 11, 12, 13] && first.reachedLimit && !first.missed)
        let next = LiveWindow.take(try window(12, count: 5), after: 13, recordedDuration: 0, limit: nil)
        #expect(next.entries.map(\.resolved.mediaSequence) == [14, 15, 16] && !next.missed)
        #expect(!next.entries[0].segment.isDiscontinuity)
        let jump = LiveWindow.take(try window(30, count: 3), after: 16, recordedDuration: 0, limit: nil)
        #expect(jump.missed && jump.entries[0].segment.isDiscontinuity)
        let unchanged = LiveWindow.take(try window(12, count: 5), after: 16, recordedDuration: 0, limit: nil)
        #expect(unchanged.entries.isEmpty)
    }

    @Test func liveRecordingsThatMissedSegmentsWriteTheIVsTheirNumbersImplied() throws {
        var planner = RenditionPlanner(
            rendition: 0, folder: "video", role: .main, decrypt: false, sharesRangedFiles: false)
        func entries(_ first: UInt64) throws -> [(segment: MediaSegment, resolved: ResolvedSegment)] {
            let playlist = try media(
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\"\n"
                    + "#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n")
            return Array(zip(playlist.segments, playlist.resolvedSegments(baseURL: "http://h/l.m3u8")))
        }
        let first = Array(try planner.plan(entries(5), playlistURL: "http://h/l.m3u8").segments)
        let later = LiveWindow.take(try entries(20), after: 6, recordedDuration: 4, limit: nil)
        let second = Array(try planner.plan(later.entries, playlistURL: "http://h/l.m3u8").segments)
        #expect((first + second).map(\.localSequence) == [5, 6, 7, 8])
        let local = PlaylistComposer.compose(
            first + second, header: MediaPlaylistHeader(try media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n")), target: .local
        ).serialized()
        #expect(
            local.contains(
                "#EXT-X-DISCONTINUITY\n#EXT-X-KEY:METHOD=AES-128,URI=\"key-0.key\",IV=0x00000000000000000000000000000014"
            ))
        #expect(local.contains("IV=0x00000000000000000000000000000015\n#EXTINF:2,\n00008.ts"))
    }

    @Test func sizeEstimatesStartFromBandwidthAndFollowWhatArrives() {
        var estimator = SizeEstimator(renditions: [
            SizeEstimator.Rendition(priorBytesPerSecond: 100_000, totalDuration: 100),
            SizeEstimator.Rendition(priorBytesPerSecond: nil, totalDuration: 100),
        ])
        #expect(estimator.estimate() == 10_000_000)
        estimator.renditions[0].doneDuration = 10
        estimator.renditions[0].doneBytes = 2_000_000
        estimator.renditions[1].doneDuration = 10
        estimator.renditions[1].doneBytes = 100_000
        #expect(estimator.estimate() == Int64(21_000_000))
        estimator.renditions[0].exactBytes = 500
        estimator.renditions[0].exactDuration = 90
        #expect(estimator.estimate() == Int64(3_000_500))
        #expect(SizeEstimator(renditions: [.init(priorBytesPerSecond: nil, totalDuration: 10)]).estimate() == nil)
    }

    @Test func packageIDsFollowTheURLAndSelectionOnly() {
        let selection = HLSSelection()
        let id = HLSDownloadJob.packageID(source: "https://a/b.m3u8", selection: selection, decrypt: false)
        #expect(id.count == 16 && id.allSatisfy(\.isHexDigit))
        #expect(id == HLSDownloadJob.packageID(source: "https://a/b.m3u8", selection: HLSSelection(), decrypt: false))
        #expect(id != HLSDownloadJob.packageID(source: "https://a/b.m3u8", selection: selection, decrypt: true))
        #expect(
            id
                != HLSDownloadJob.packageID(
                    source: "https://a/b.m3u8", selection: HLSSelection(audio: .language("fr")), decrypt: false))
        #expect(id != HLSDownloadJob.packageID(source: "https://a/c.m3u8", selection: selection, decrypt: false))
        let job = HLSDownloadJob(
            source: "https://a/b.m3u8", options: HLSDownloadOptions(connections: 2, skipBroken: true),
            packageDirectory: URL(fileURLWithPath: "/tmp"))
        #expect(job.packageID == id)
    }

    @Test func namesAreSanitized() {
        #expect(PackageLayout.slug("Français (AD) / ../x") == "fran-ais-ad-x")
        #expect(PackageLayout.renditionFolder(role: .audio, label: "en-US", taken: ["audio-en-us"]) == "audio-en-us-2")
        #expect(PackageLayout.renditionFolder(role: .subtitles, label: "../..", taken: []) == "subtitles")
        #expect(PackageLayout.fileExtension(forURI: "http://h/a/b.M4S?x=y.ts", fallback: "ts") == "m4s")
        #expect(PackageLayout.fileExtension(forURI: "http://h/a/b.exe", fallback: "ts") == "ts")
        #expect(PackageLayout.fileExtension(forURI: "http://h/a/.htaccess", fallback: "ts") == "ts")
        for bad in ["../x", "/etc/passwd", "a//b", "a/./b", ".hidden/x", "a/b c", "a/\u{0}", ""] {
            #expect(!PackageLayout.isContained(bad), "\(bad)")
        }
        #expect(PackageLayout.isContained(".streamkit/video.m3u8") && PackageLayout.isContained("audio-fr/00001.aac"))
    }

    @Test func aCodecFilterChoosesAmongItsVariantsOnly() throws {
        let master = try #require(
            try Playlist.parse(
                """
                #EXTM3U
                #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2"
                avc-low.m3u8
                #EXT-X-STREAM-INF:BANDWIDTH=3000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2"
                avc-high.m3u8
                #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1920x1080,CODECS="hvc1.2.4.L123.B0,mp4a.40.2"
                hevc.m3u8
                """
            ).playlist.multivariant)
        let base = "https://h/m/master.m3u8"
        func chosen(_ selection: HLSSelection) throws(HLSDownloadError) -> String {
            try RenditionSelector.choose(from: master, masterURL: base, selection: selection).variant.uri
        }
        #expect(try chosen(HLSSelection()) == "avc-high.m3u8")
        #expect(try chosen(HLSSelection(codecs: ["hvc1"])) == "hevc.m3u8")
        #expect(try chosen(HLSSelection(variant: .maximumBandwidth(1_000_000), codecs: ["AVC1"])) == "avc-low.m3u8")
        #expect(try chosen(HLSSelection(codecs: ["av01", "hvc1"])) == "hevc.m3u8")
        do {
            _ = try chosen(HLSSelection(codecs: ["av01"]))
            Issue.record("an AV1 filter matched")
        } catch {
            #expect(error.kind == .noMatchingVariant)
            #expect("\(error)".contains("with codec av01") && "\(error)".contains("hvc1.2.4.L123.B0"), "\(error)")
        }
        // The filter is part of the package's identity only when given.
        let plain = HLSDownloadJob.packageID(source: base, selection: HLSSelection(), decrypt: false)
        #expect(HLSDownloadJob.packageID(source: base, selection: HLSSelection(codecs: []), decrypt: false) == plain)
        #expect(
            HLSDownloadJob.packageID(source: base, selection: HLSSelection(codecs: ["hvc1"]), decrypt: false) != plain)
        let decoded = try JSONDecoder().decode(
            HLSSelection.self, from: try JSONEncoder().encode(HLSSelection(codecs: ["hvc1"])))
        #expect(decoded.codecs == ["hvc1"])
    }

    @Test func selectionTakesTheBestVariantDefaultAudioAndAllSubtitles() throws {
        let master = try #require(
            try Playlist.parse(
                """
                #EXTM3U
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,URI="a/en.m3u8"
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="fr",NAME="Français",URI="a/fr.m3u8"
                #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English",URI="s/en.m3u8"
                #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"
                #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="aud",SUBTITLES="subs",CLOSED-CAPTIONS="cc"
                low.m3u8
                #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,AUDIO="aud",SUBTITLES="subs",CLOSED-CAPTIONS="cc"
                high.m3u8
                #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8"
                """
            ).playlist.multivariant)
        let base = "https://h/m/master.m3u8"
        let choice = try RenditionSelector.choose(from: master, masterURL: base, selection: HLSSelection())
        #expect(choice.variant.uri == "high.m3u8")
        #expect(choice.renditions.map(\.folder) == ["video", "audio-en", "subtitles-en"])
        #expect(
            choice.renditions.map(\.playlistURL) == [
                "https://h/m/high.m3u8", "https://h/m/a/en.m3u8", "https://h/m/s/en.m3u8",
            ])
        let french = try RenditionSelector.choose(
            from: master, masterURL: base,
            selection: HLSSelection(variant: .worst, audio: .language("fra"), subtitles: .none))
        #expect(french.renditions.map(\.folder) == ["video", "audio-fr"] && french.variant.uri == "low.m3u8")
        #expect(throws: HLSDownloadError(.noMatchingRendition)) {
            try RenditionSelector.choose(from: master, masterURL: base, selection: HLSSelection(audio: .language("de")))
        }
        #expect(throws: HLSDownloadError(.noMatchingVariant)) {
            try RenditionSelector.choose(
                from: master, masterURL: base, selection: HLSSelection(variant: .maximumBandwidth(1000)))
        }
        // The package's master lists what was downloaded, with relative URIs.
        let all = try RenditionSelector.choose(
            from: master, masterURL: base, selection: HLSSelection(audio: .all, subtitles: .none))
        let written = MasterComposer.compose(
            master: master, masterURL: base, variant: all.variant, renditions: all.renditions, measured: nil
        ).serialized()
        #expect(
            written == """
                #EXTM3U
                #EXT-X-MEDIA:TYPE=AUDIO,URI="audio-en/index.m3u8",GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES
                #EXT-X-MEDIA:TYPE=AUDIO,URI="audio-fr/index.m3u8",GROUP-ID="aud",LANGUAGE="fr",NAME="Français"
                #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"
                #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,AUDIO="aud",CLOSED-CAPTIONS="cc"
                video/index.m3u8

                """)
    }

    /// What a download holds per segment stays as small as it was made (bench/RESULTS.md,
    /// 2026-12-08): a field added in the wrong place pads every one of a million records.
    @Test func thePerSegmentRecordsKeepTheirSize() {
        #expect(MemoryLayout<PlannedFile>.stride <= 88)
        #expect(MemoryLayout<FileState>.stride <= 32)
        #expect(MemoryLayout<RecordedSegment>.stride <= 224)
    }
}
