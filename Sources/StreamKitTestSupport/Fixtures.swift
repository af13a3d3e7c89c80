import Foundation
import StreamKitCore

/// A media fixture ffmpeg makes for tests: which kind, how long, how big.
public struct FixtureRecipe: Hashable, Sendable, CustomStringConvertible {
    /// The kinds of stream the tests need.
    public enum Kind: String, Sendable, CaseIterable {
        /// HLS VOD in MPEG-TS segments (`index.m3u8`).
        case hlsTS
        /// HLS VOD in fragmented MP4 with an init map (`index.m3u8`, `init.mp4`).
        case hlsFMP4
        /// HLS with AES-128 segments and an explicit `IV` attribute.
        case hlsAES128ExplicitIV
        /// HLS with AES-128 segments and no `IV` attribute: the IV is the media sequence number.
        case hlsAES128SequenceIV
        /// HLS whose segments are byte ranges of one file (`EXT-X-BYTERANGE`).
        case hlsByteRange
        /// A master playlist: 3 video variants, English and French audio, English WebVTT subtitles.
        case hlsMaster
        /// HLS with a discontinuity in the middle (the resolution changes there).
        case hlsDiscontinuity
        /// An FLV file with H.264 video and AAC audio.
        case flv
        /// DASH (`manifest.mpd`, ffmpeg `-f dash`), for this and the next three: two video
        /// Representations (320x240 and 160x120) and audio in English and French, each in its
        /// AdaptationSet. SegmentTemplate with a SegmentTimeline.
        case dashTimeline
        /// SegmentTemplate with `$Number$` and a duration.
        case dashNumber
        /// One file per Representation, a SegmentList of byte ranges (`-single_file 1`).
        case dashSingleFile
        /// One file per Representation with a global `sidx` (video and English audio only),
        /// described by SegmentBase with an `indexRange`.
        case dashSegmentBase
    }

    public var kind: Kind
    /// The stream's length in seconds.
    public var seconds: Int
    /// The target segment length in seconds.
    public var segmentSeconds: Int
    /// The video bitrate passed to x264 (`-b:v`), such as `8M` for big segments; encoder default when `nil`.
    public var videoBitrate: String?

    public init(_ kind: Kind, seconds: Int = 10, segmentSeconds: Int = 2, videoBitrate: String? = nil) {
        self.kind = kind
        self.seconds = seconds
        self.segmentSeconds = segmentSeconds
        self.videoBitrate = videoBitrate
    }

    /// A directory name unique to the recipe.
    public var description: String {
        "\(kind.rawValue)-\(seconds)s-\(segmentSeconds)s" + (videoBitrate.map { "-\($0)" } ?? "")
    }

    /// The file a player opens, relative to the fixture directory.
    public var entry: String {
        switch kind {
        case .hlsMaster: "master.m3u8"
        case .flv: "video.flv"
        case .dashTimeline, .dashNumber, .dashSingleFile, .dashSegmentBase: "manifest.mpd"
        default: "index.m3u8"
        }
    }
}

/// A generated fixture on disk.
public struct Fixture: Sendable {
    /// What made it.
    public let recipe: FixtureRecipe
    /// The directory holding every file of the fixture.
    public let directory: URL
    /// The AES-128 key, for encrypted recipes.
    public let key: [UInt8]?

    /// The file a player opens.
    public var entryFile: URL { directory.appendingPathComponent(recipe.entry) }

    /// The fixture's files, as paths relative to its directory, sorted.
    public func files() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: directory.appendingPathComponent(path).path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                result.append(path)
            }
        }
        return result.sorted()
    }
}

/// Makes fixtures with ffmpeg, once per recipe per test run, however many tests ask at once.
public actor Fixtures {
    /// The fixtures of this test run.
    public static let shared = Fixtures()

    /// The AES-128 key of the encrypted recipes.
    public static let key: [UInt8] = Hex.decode("6b1e3f0a9c2d4e5f708192a3b4c5d6e7")!
    /// The explicit IV of ``FixtureRecipe/Kind/hlsAES128ExplicitIV``.
    public static let explicitIV: [UInt8] = Hex.decode("000102030405060708090a0b0c0d0e0f")!
    /// The first media sequence number of ``FixtureRecipe/Kind/hlsAES128SequenceIV`` (not zero, so
    /// that an IV wrongly taken as zero fails).
    public static let sequenceIVFirstMediaSequence = 7

    private var pending: [FixtureRecipe: Task<Fixture, any Error>] = [:]

    /// The fixture for `recipe`, generating it on first request.
    ///
    /// - Throws: ``TestSupportError`` when ffmpeg or openssl is missing or fails.
    public func fixture(_ recipe: FixtureRecipe) async throws -> Fixture {
        if let task = pending[recipe] { return try await task.value }
        let task = Task { try await Self.generate(recipe) }
        pending[recipe] = task
        return try await task.value
    }

    // MARK: Recipes

    private static func generate(_ recipe: FixtureRecipe) async throws -> Fixture {
        let directory = TestRun.directory.appendingPathComponent("fixtures/\(recipe)", isDirectory: true)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var key: [UInt8]?
        switch recipe.kind {
        case .hlsTS where recipe.seconds > Self.loopedClipSeconds:
            try await makeLoopedStream(recipe, in: directory)
        case .hlsTS:
            try await ffmpeg(input(recipe) + encode(recipe) + hls(recipe, segment: "seg%03d.ts"), in: directory)
        case .hlsFMP4:
            try await ffmpeg(
                input(recipe) + encode(recipe)
                    + hls(
                        recipe, segment: "seg%03d.m4s",
                        extra: ["-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4"]),
                in: directory)
        case .hlsAES128ExplicitIV:
            key = Self.key
            try Data(Self.key).write(to: directory.appendingPathComponent("key.bin"))
            let keyInfo = "key.bin\n\(directory.path)/key.bin\n\(Hex.encode(explicitIV))\n"
            try keyInfo.write(to: directory.appendingPathComponent("key.info"), atomically: true, encoding: .utf8)
            try await ffmpeg(
                input(recipe) + encode(recipe)
                    + hls(recipe, segment: "seg%03d.ts", extra: ["-hls_key_info_file", "key.info"]),
                in: directory)
            try FileManager.default.removeItem(at: directory.appendingPathComponent("key.info"))
        case .hlsAES128SequenceIV:
            key = Self.key
            try await makeSequenceIVStream(recipe, in: directory)
        case .hlsByteRange:
            try await ffmpeg(
                input(recipe) + encode(recipe)
                    + hls(recipe, segment: "media.ts", extra: ["-hls_flags", "single_file"]),
                in: directory)
        case .hlsMaster:
            try await makeMaster(recipe, in: directory)
        case .hlsDiscontinuity:
            try await makeDiscontinuity(recipe, in: directory)
        case .flv:
            try await ffmpeg(input(recipe) + encode(recipe) + ["-f", "flv", "video.flv"], in: directory)
        case .dashTimeline, .dashNumber, .dashSingleFile, .dashSegmentBase:
            try await makeDASH(recipe, in: directory)
        }
        return Fixture(recipe: recipe, directory: directory, key: key)
    }

    /// Test pattern and tone, `seconds` long.
    private static func input(_ recipe: FixtureRecipe, size: String = "320x240", frequency: Int = 440) -> [String] {
        [
            "-f", "lavfi", "-i", "testsrc=size=\(size):rate=25",
            "-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=44100",
            "-t", "\(recipe.seconds)",
        ]
    }

    /// H.264 with a keyframe at every segment boundary (25 fps), AAC audio.
    private static func encode(_ recipe: FixtureRecipe) -> [String] {
        let gop = "\(recipe.segmentSeconds * 25)"
        var arguments = [
            "-map", "0:v", "-map", "1:a", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast",
            "-g", gop, "-keyint_min", gop, "-sc_threshold", "0", "-c:a", "aac", "-b:a", "64k",
        ]
        if let bitrate = recipe.videoBitrate {
            arguments += ["-b:v", bitrate, "-maxrate", bitrate, "-bufsize", bitrate]
        }
        return arguments
    }

    private static func hls(
        _ recipe: FixtureRecipe, segment: String, extra: [String] = [], playlist: String = "index.m3u8"
    ) -> [String] {
        [
            "-f", "hls", "-hls_time", "\(recipe.segmentSeconds)", "-hls_playlist_type", "vod", "-hls_segment_filename",
            segment,
        ]
            + extra + [playlist]
    }

    static func ffmpeg(_ arguments: [String], in directory: URL) async throws {
        try await Tool.ffmpeg.run(
            ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + arguments, timeout: .seconds(300),
            workingDirectory: directory)
    }

    /// How long the clip is that long TS recipes repeat.
    private static let loopedClipSeconds = 10

    /// A long TS stream made of a short clip repeated without re-encoding: minutes of x264 at the
    /// start of a test run took a core from every other test. The timestamps run on across the
    /// repeats, so every segment differs from every other.
    private static func makeLoopedStream(_ recipe: FixtureRecipe, in directory: URL) async throws {
        var clip = recipe
        clip.seconds = loopedClipSeconds
        try await ffmpeg(input(clip) + encode(clip) + ["-f", "mpegts", "clip.ts"], in: directory)
        try await ffmpeg(
            ["-stream_loop", "-1", "-i", "clip.ts", "-t", "\(recipe.seconds)", "-c", "copy"]
                + hls(recipe, segment: "seg%03d.ts"),
            in: directory)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("clip.ts"))
    }

    /// TS segments encrypted here with `openssl enc`, since ffmpeg always writes an explicit IV.
    private static func makeSequenceIVStream(_ recipe: FixtureRecipe, in directory: URL) async throws {
        let first = sequenceIVFirstMediaSequence
        try await ffmpeg(
            input(recipe) + encode(recipe)
                + hls(recipe, segment: "clear%03d.ts", extra: ["-start_number", "\(first)"], playlist: "clear.m3u8"),
            in: directory)
        try Data(key).write(to: directory.appendingPathComponent("key.bin"))
        let clear = try String(contentsOf: directory.appendingPathComponent("clear.m3u8"), encoding: .utf8)
        var output: [String] = []
        var sequence = first
        for line in clear.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE") {
                output.append(line)
                output.append("#EXT-X-KEY:METHOD=AES-128,URI=\"key.bin\"")
            } else if line.hasSuffix(".ts") {
                let name = String(format: "seg%03d.ts", sequence)
                let iv = Hex.encode(AES128CBC.iv(mediaSequence: UInt64(sequence)))
                try await Tool.openssl.run(
                    ["enc", "-aes-128-cbc", "-K", Hex.encode(key), "-iv", iv, "-in", line, "-out", name],
                    workingDirectory: directory)
                try FileManager.default.removeItem(at: directory.appendingPathComponent(line))
                output.append(name)
                sequence += 1
            } else {
                output.append(line)
            }
        }
        guard output.contains(where: { $0.hasPrefix("#EXT-X-KEY") }) else {
            throw TestSupportError("ffmpeg's playlist has no EXT-X-MEDIA-SEQUENCE to place the key after")
        }
        try output.joined(separator: "\n").write(
            to: directory.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("clear.m3u8"))
    }

    /// Three video variants and two audio renditions from ffmpeg; subtitles written here.
    private static func makeMaster(_ recipe: FixtureRecipe, in directory: URL) async throws {
        let gop = "\(recipe.segmentSeconds * 25)"
        try await ffmpeg(
            [
                "-f", "lavfi", "-i", "testsrc=size=640x360:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100",
                "-t", "\(recipe.seconds)",
                "-filter_complex",
                "[0:v]format=yuv420p,split=3[a][b][c];[a]scale=640:360[v0];[b]scale=480:270[v1];[c]scale=320:180[v2]",
                "-map", "[v0]", "-map", "[v1]", "-map", "[v2]", "-map", "1:a", "-map", "2:a",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", gop, "-keyint_min", gop, "-sc_threshold", "0",
                "-b:v:0", "800k", "-b:v:1", "400k", "-b:v:2", "200k", "-c:a", "aac", "-b:a", "64k",
                "-f", "hls", "-hls_time", "\(recipe.segmentSeconds)", "-hls_playlist_type", "vod",
                "-master_pl_name", "master.m3u8",
                "-var_stream_map",
                "v:0,agroup:aud,name:video_360p v:1,agroup:aud,name:video_270p v:2,agroup:aud,name:video_180p "
                    + "a:0,agroup:aud,language:eng,name:audio_eng,default:yes a:1,agroup:aud,language:fra,name:audio_fra",
                "-hls_segment_filename", "%v/seg%03d.ts", "%v/index.m3u8",
            ],
            in: directory)

        // English subtitles: one WebVTT file a segment, one cue a second.
        let subtitles = directory.appendingPathComponent("subs_eng", isDirectory: true)
        try FileManager.default.createDirectory(at: subtitles, withIntermediateDirectories: true)
        var playlist = [
            "#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:\(recipe.segmentSeconds)", "#EXT-X-MEDIA-SEQUENCE:0",
            "#EXT-X-PLAYLIST-TYPE:VOD",
        ]
        var start = 0
        var index = 0
        while start < recipe.seconds {
            let length = min(recipe.segmentSeconds, recipe.seconds - start)
            var cues = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:126000,LOCAL:00:00:00.000\n\n"
            for second in start..<(start + length) {
                cues += "\(timestamp(second)) --> \(timestamp(second + 1))\nSecond \(second + 1)\n\n"
            }
            let name = String(format: "sub%03d.vtt", index)
            try cues.write(to: subtitles.appendingPathComponent(name), atomically: true, encoding: .utf8)
            playlist += ["#EXTINF:\(length).000,", name]
            start += length
            index += 1
        }
        playlist.append("#EXT-X-ENDLIST")
        try (playlist.joined(separator: "\n") + "\n").write(
            to: subtitles.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)

        // Name the renditions, and add the subtitle group to every variant.
        let masterURL = directory.appendingPathComponent("master.m3u8")
        var master = try String(contentsOf: masterURL, encoding: .utf8)
        master = master.replacingOccurrences(of: "NAME=\"audio_3\"", with: "NAME=\"English\"")
        master = master.replacingOccurrences(of: "NAME=\"audio_4\"", with: "NAME=\"French\"")
        master = master.replacingOccurrences(
            of: "AUDIO=\"group_aud\"", with: "AUDIO=\"group_aud\",SUBTITLES=\"subs\"")
        master = master.replacingOccurrences(
            of: "#EXT-X-STREAM-INF",
            with: "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"English\",DEFAULT=YES,AUTOSELECT=YES,"
                + "LANGUAGE=\"eng\",URI=\"subs_eng/index.m3u8\"\n#EXT-X-STREAM-INF",
            options: [], range: master.range(of: "#EXT-X-STREAM-INF"))
        try master.write(to: masterURL, atomically: true, encoding: .utf8)
    }

    /// Two clips of different sizes joined by `EXT-X-DISCONTINUITY`.
    private static func makeDiscontinuity(_ recipe: FixtureRecipe, in directory: URL) async throws {
        var half = recipe
        half.seconds = max(recipe.segmentSeconds, recipe.seconds / 2)
        try await ffmpeg(input(half) + encode(half) + hls(half, segment: "a%03d.ts", playlist: "a.m3u8"), in: directory)
        try await ffmpeg(
            input(half, size: "480x270", frequency: 880) + encode(half)
                + hls(half, segment: "b%03d.ts", playlist: "b.m3u8"),
            in: directory)
        var targetDuration = recipe.segmentSeconds
        func segments(_ name: String) throws -> [String] {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            for line in lines where line.hasPrefix("#EXT-X-TARGETDURATION:") {
                targetDuration = max(targetDuration, Int(line.dropFirst("#EXT-X-TARGETDURATION:".count)) ?? 0)
            }
            return lines.indices.compactMap { lines[$0].hasPrefix("#EXTINF") ? lines[$0] + "\n" + lines[$0 + 1] : nil }
        }
        let first = try segments("a.m3u8")
        let second = try segments("b.m3u8")
        let playlist =
            [
                "#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-MEDIA-SEQUENCE:0",
                "#EXT-X-PLAYLIST-TYPE:VOD",
            ] + first + ["#EXT-X-DISCONTINUITY"] + second + ["#EXT-X-ENDLIST"]
        try (playlist.joined(separator: "\n") + "\n").write(
            to: directory.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        for name in ["a.m3u8", "b.m3u8"] {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    private static func timestamp(_ seconds: Int) -> String {
        String(format: "00:%02d:%02d.000", seconds / 60, seconds % 60)
    }
}
