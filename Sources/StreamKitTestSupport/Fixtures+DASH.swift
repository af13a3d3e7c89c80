import Foundation

extension Fixtures {
    /// The languages of the DASH recipes' audio AdaptationSets, in order.
    public static let dashLanguages = ["eng", "fra"]

    /// A DASH recipe: ffmpeg's `-f dash` for the template and single-file forms; for SegmentBase,
    /// fragmented MP4 files with a global `sidx` (ffmpeg's `global_sidx`) and an MPD written
    /// here, its ranges read from the files' top-level boxes.
    static func makeDASH(_ recipe: FixtureRecipe, in directory: URL) async throws {
        let gop = "\(recipe.segmentSeconds * 25)"
        let input = [
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000",
        ]
        let video = [
            "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-g", gop, "-keyint_min", gop,
            "-sc_threshold", "0",
        ]
        let audio = ["-c:a", "aac", "-b:a", "64k"]
        if recipe.kind == .dashSegmentBase {
            let fragmented = ["-movflags", "+frag_keyframe+empty_moov+default_base_moof+global_sidx", "-f", "mp4"]
            try await ffmpeg(
                input + ["-map", "0:v", "-t", "\(recipe.seconds)"] + video + ["-b:v", "400k"] + fragmented
                    + ["video.mp4"], in: directory)
            try await ffmpeg(
                input + ["-map", "1:a", "-t", "\(recipe.seconds)"] + audio
                    + ["-frag_duration", "\(recipe.segmentSeconds * 1_000_000)"] + fragmented + ["audio.mp4"],
                in: directory)
            try segmentBaseMPD(recipe, in: directory).write(
                to: directory.appendingPathComponent("manifest.mpd"), atomically: true, encoding: .utf8)
            return
        }
        var form: [String]
        switch recipe.kind {
        case .dashTimeline: form = ["-use_template", "1", "-use_timeline", "1"]
        case .dashNumber: form = ["-use_template", "1", "-use_timeline", "0"]
        default: form = ["-single_file", "1"]
        }
        form += ["-seg_duration", "\(recipe.segmentSeconds)"]
        try await ffmpeg(
            input + ["-map", "0:v", "-map", "0:v", "-map", "1:a", "-map", "2:a", "-t", "\(recipe.seconds)"] + video
                + ["-b:v:0", "400k", "-s:v:1", "160x120", "-b:v:1", "150k"] + audio
                + [
                    "-metadata:s:a:0", "language=\(dashLanguages[0])", "-metadata:s:a:1",
                    "language=\(dashLanguages[1])",
                ]
                + ["-adaptation_sets", "id=0,streams=v id=1,streams=2 id=2,streams=3"] + form
                + ["-f", "dash", "manifest.mpd"],
            in: directory)
    }

    /// The MPD of the SegmentBase recipe: each file's initialization (its `ftyp` and `moov`) and
    /// index (its `sidx`).
    private static func segmentBaseMPD(_ recipe: FixtureRecipe, in directory: URL) throws -> String {
        func ranges(_ name: String) throws -> (initialization: String, index: String) {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
            var offset = 0
            var initializationEnd: Int?
            while offset + 8 <= bytes.count {
                let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
                guard size >= 8 else { break }
                if type == "sidx", let end = initializationEnd {
                    return ("0-\(end - 1)", "\(offset)-\(offset + size - 1)")
                }
                if type == "moov" { initializationEnd = offset + size }
                offset += size
            }
            throw TestSupportError("\(name) has no moov followed by a sidx")
        }
        let video = try ranges("video.mp4")
        let audio = try ranges("audio.mp4")
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" \
            profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" mediaPresentationDuration="PT\(recipe.seconds)S" \
            minBufferTime="PT2S">
              <Period id="0">
                <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true">
                  <Representation id="v" bandwidth="400000" codecs="avc1.42c00d" width="320" height="240">
                    <BaseURL>video.mp4</BaseURL>
                    <SegmentBase indexRange="\(video.index)"><Initialization range="\(video.initialization)"/></SegmentBase>
                  </Representation>
                </AdaptationSet>
                <AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" lang="\(dashLanguages[0])">
                  <Representation id="a" bandwidth="64000" codecs="mp4a.40.2" audioSamplingRate="48000">
                    <BaseURL>audio.mp4</BaseURL>
                    <SegmentBase indexRange="\(audio.index)"><Initialization range="\(audio.initialization)"/></SegmentBase>
                  </Representation>
                </AdaptationSet>
              </Period>
            </MPD>

            """
    }
}
