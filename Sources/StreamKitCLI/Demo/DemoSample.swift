import Foundation

/// The sample stream `streamkit demo` serves: `Sources/StreamKitCLI/DemoSample`, made by
/// `scripts/make-demo-sample.sh` and shipped as a resource of this module.
enum DemoSample {
    /// SwiftPM copies the module's resources into this folder beside the executable.
    static let bundleName = "StreamKit_StreamKitCLI.resources"

    /// The folder holding `master.m3u8`: `$STREAMKIT_DEMO_SAMPLE` when set, else the resource
    /// bundle beside the executable (looked up without `Bundle.module`, which would stop the
    /// process when the bundle is missing).
    ///
    /// - Throws: ``DemoFailure`` naming where it looked.
    static func locate(environment: [String: String]) throws -> URL {
        var candidates: [URL] = []
        if let override = environment["STREAMKIT_DEMO_SAMPLE"], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        for directory in [
            Bundle.main.executableURL?.deletingLastPathComponent(), executable.deletingLastPathComponent(),
        ] {
            guard let directory else { continue }
            let candidate = directory.appendingPathComponent(bundleName).appendingPathComponent("DemoSample")
            if !candidates.contains(candidate) { candidates.append(candidate) }
        }
        for candidate in candidates
        where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("master.m3u8").path) {
            return candidate
        }
        throw DemoFailure(
            "the demo's sample stream is missing (looked in \(candidates.map(\.path).joined(separator: ", "))); "
                + "run the streamkit built by `swift build`, or set STREAMKIT_DEMO_SAMPLE to Sources/StreamKitCLI/DemoSample"
        )
    }
}

/// Decodes a stream with ffprobe, as a player would.
enum DemoProbe {
    /// "250 video frames and 431 audio frames" for `url`.
    ///
    /// - Throws: ``DemoFailure`` when ffprobe fails or reports no video frame.
    static func decodedFrames(ffprobe: String, url: String) async throws -> String {
        let arguments = [
            "-v", "error", "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", "-of", "json", url,
        ]
        let outcome: ExternalTool.Outcome
        do {
            outcome = try await ExternalTool.run(ffprobe, arguments)
        } catch {
            throw DemoFailure("\(error)")
        }
        guard outcome.status == 0 else {
            throw DemoFailure(
                "ffprobe exited with \(outcome.status) reading \(url): \(outcome.standardError.suffix(500))")
        }
        struct Report: Decodable {
            struct Stream: Decodable {
                let codecType: String
                let frames: String?
                enum CodingKeys: String, CodingKey {
                    case codecType = "codec_type"
                    case frames = "nb_read_frames"
                }
            }
            let streams: [Stream]
        }
        guard let report = try? JSONDecoder().decode(Report.self, from: outcome.standardOutput) else {
            throw DemoFailure("ffprobe's report on \(url) does not parse")
        }
        var frames: [String: Int] = [:]
        for stream in report.streams {
            frames[stream.codecType, default: 0] += Int(stream.frames ?? "") ?? 0
        }
        guard let video = frames["video"], video > 0 else {
            throw DemoFailure("ffprobe decoded no video frame from \(url)")
        }
        return "\(video) video frames and \(frames["audio"] ?? 0) audio frames"
    }
}
