import Foundation
import StreamKitDASH
import StreamKitHLS
import Testing

/// Real MPDs from other projects' test data (`Corpus/`, sources and licenses in
/// `Corpus/SOURCES.md`): each is told as an MPD, reads, writes back to text that reads to the
/// same text again, resolves, reads as HLS, and survives the proxy's rewrite; a few facts of
/// particular files are checked by hand.
struct MPDCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")
    static let files =
        ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).filter { $0.hasSuffix(".mpd") }
        .sorted()
    static let url = "https://cdn.example/dir/manifest.mpd"

    static func load(_ file: String) throws -> MPD {
        try MPD.parse(Array(try Data(contentsOf: root.appendingPathComponent(file))))
    }

    @Test func theCorpusIsThere() {
        #expect(Self.files.count == 14, "\(Self.files)")
    }

    @Test(arguments: files)
    func eachMPDReadsWritesResolvesAndRewrites(file: String) throws {
        let bytes = Array(try Data(contentsOf: Self.root.appendingPathComponent(file)))
        #expect(MPD.looksLikeMPD(bytes))
        let mpd = try MPD.parse(bytes)
        #expect(!mpd.periods.isEmpty)
        let written = mpd.serialized()
        #expect(try MPD.parse(Array(written.utf8)).serialized() == written)

        // A static MPD's Representations all resolve, to absolute URLs; a dynamic one's may need
        // the clock (a template with only a duration), and say so.
        for (index, period) in mpd.periods.enumerated() {
            for set in period.adaptationSets {
                for representation in set.representations {
                    do {
                        let resolved = try mpd.resolve(
                            periodIndex: index, adaptationSet: set, representation: representation, mpdURL: Self.url)
                        #expect(resolved.segments.allSatisfy { $0.url.hasPrefix("http") && $0.duration >= 0 })
                    } catch {
                        #expect(mpd.type == .dynamic, "\(file): \(representation.id): \(error)")
                    }
                }
            }
        }
        let presentation = DASHPresentation(mpd: mpd, mpdURL: Self.url)
        let master = presentation.multivariant()
        // Variants where there is video or audio (a text-only MPD has none: a download refuses it).
        let media = mpd.periods[0].adaptationSets.contains { ["video", "audio"].contains($0.kind) }
        #expect(master.variants.isEmpty == !media, "\(file)")
        for uri in master.variants.map(\.uri) + master.renditions.compactMap(\.uri) {
            let key = try #require(DASHPresentation.Key(url: uri))
            if mpd.type == .static, try presentation.indexRequests(for: key).isEmpty {
                let playlist = try presentation.mediaPlaylist(for: key)
                #expect(playlist.hasEndList && playlist.segments.allSatisfy { $0.duration >= 0 }, "\(file) \(key)")
            }
        }
        let proxied = mpd.withAbsoluteURLs(mpdURL: Self.url) { "http://127.0.0.1:9/proxy/file?url=" + $0 }
        let reread = try MPD.parse(Array(proxied.serialized().utf8))
        #expect(reread.baseURLs.isEmpty && reread.periods.allSatisfy { $0.baseURLs.isEmpty })
    }

    @Test func baseURLsChainAtEveryLevelAndAnAbsoluteOneWins() throws {
        let mpd = try Self.load("streamlink-baseurl-nested.mpd")
        let period = mpd.periods[0]
        var initializations: [String] = []
        for set in period.adaptationSets {
            for representation in set.representations {
                let resolved = try mpd.resolve(
                    periodIndex: 0, adaptationSet: set, representation: representation, mpdURL: Self.url)
                initializations.append(resolved.initialization?.url ?? "")
            }
        }
        #expect(
            initializations == [
                "https://hostname/period/init_video_5000kbps.m4s",
                "https://hostname/period/representation/init_video_9000kbps.m4s",
                "https://hostname/period/adaptationset/init_audio_128kbps.m4s",
                "https://hostname/period/adaptationset/representation/init_audio_256kbps.m4s",
                "https://other/init_audio_320kbps.m4s",
            ])
    }

    @Test func timeAndBandwidthTemplatesOverLongTimelines() throws {
        let mpd = try Self.load("androidx-media-vod-time-timeline.mpd")
        let sets = mpd.periods[0].adaptationSets
        let video = try mpd.resolve(
            periodIndex: 0, adaptationSet: sets[0], representation: sets[0].representations[0], mpdURL: Self.url)
        #expect(video.segments.count == 226)
        #expect(
            video.segments.prefix(2).map(\.url) == [
                "https://cdn.example/dir/video_0_1300000.m4s", "https://cdn.example/dir/video_4000_1300000.m4s",
            ])
        let audio = try mpd.resolve(
            periodIndex: 0, adaptationSet: sets[1], representation: sets[1].representations[0], mpdURL: Self.url)
        #expect(audio.segments.count == 283 && audio.segments.last?.duration == 1.6)
    }

    @Test func periodsWithoutAStartFollowTheOneBefore() throws {
        let mpd = try Self.load("mpd-parser-multiperiod-dynamic.mpd")
        #expect(mpd.periods.count == 5)
        var end = mpd.periodTimes(0).start
        for index in mpd.periods.indices {
            let times = mpd.periodTimes(index)
            if mpd.periods[index].start == nil { #expect(times.start == end, "Period \(index)") }
            end = times.start + (times.duration ?? 0)
        }
    }

    @Test func drmIsReportedAndTextSetsBecomeSubtitles() throws {
        let mpd = try Self.load("dashjs-laurl-multidrm.mpd")
        let protections = mpd.periods[0].adaptationSets.flatMap { $0.contentProtection.map(\.schemeIdUri) }
        #expect(protections.contains("urn:mpeg:dash:mp4protection:2011"))
        #expect(protections.contains { $0.lowercased().hasPrefix("urn:uuid:edef8ba9") }, "Widevine: \(protections)")
        let text = try Self.load("livesim2-imsc1-subtitles.mpd")
        let master = DASHPresentation(mpd: text, mpdURL: Self.url).multivariant()
        #expect(master.renditions.filter { $0.type == .subtitles }.count == 2)
    }
}
