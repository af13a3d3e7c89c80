import Foundation
import StreamKitDownloads

/// `streamkit export ID-or-DIR OUT.ts|OUT.mp4|OUT.mkv`: a downloaded package as one file.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a downloaded HLS or DASH package as one .ts, .mp4 or .mkv file.",
        discussion: """
            Concatenates the package's main rendition, one segment at a time (AES-128 segments are \
            decrypted on the way, gaps left out); fragmented MP4 becomes the init section followed by \
            every fragment. Needs no ffmpeg when the output's container is the segments' own (.ts for \
            transport stream segments, .mp4 for fragmented MP4). Remuxing (.mp4 from transport stream \
            segments, .ts from fragmented MP4, any .mkv) and adding alternative audio renditions and \
            subtitles call ffmpeg when it is installed (stream copy, no re-encoding): every audio \
            rendition of the package with its language, and every subtitle rendition, merged, with its \
            language (mov_text in .mp4, SubRip in .mkv; .ts holds none). Without ffmpeg, each audio \
            rendition in the output's container is written beside it as a file of its own \
            (talk.mp4, talk.audio-eng.mp4), each subtitle rendition merged into a WebVTT file \
            (talk.subs-eng.vtt), with a warning; audio in another container is left out. DASH \
            packages export the same way: one fragmented MP4 per Representation without ffmpeg. \
            The package is found by its id in the library \
            ($STREAMKIT_HOME/library/ID) or by its folder.
            """,
        examples: [
            .init("Export a package from the library", "streamkit export 3f2a9c1b7d4e5f60 talk.ts"),
            .init("Export a package folder to MP4", "streamkit export ~/Videos/show show.mp4"),
        ],
        group: "Downloads")

    @Argument(valueName: "package", help: "The package id in the library, or the package folder.")
    var package: String
    @Argument(valueName: "output", help: "The file to write: .ts, .mp4 or .mkv.") var output: String
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print progress and the result as JSON lines on standard output.")

    init() {}

    mutating func validate() throws {
        let lower = output.lowercased()
        guard lower.hasSuffix(".ts") || lower.hasSuffix(".mp4") || lower.hasSuffix(".mkv") else {
            throw ValidationError("<output> must end in .ts, .mp4 or .mkv, got '\(output)'")
        }
    }

    func run(_ context: CommandContext) async throws {
        let directory = locate(context)
        let source: HLSPackage
        do {
            source = try HLSPackage(directory: directory)
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        let destination = URL(fileURLWithPath: output)
        let ffmpeg = ExternalTool.find("ffmpeg", environment: context.environment)
        let printer = ProgressPrinter(context: context, json: format.json)
        let started = ContinuousClock.now
        func progress(_ label: String) -> (PackageExportProgress) -> Void {
            { value in
                printer.report(
                    "  \(label): \(value.segmentsDone)/\(value.segmentsTotal) segments, "
                        + ByteCountText.format(Double(value.bytesWritten)),
                    fields: [
                        "rendition": .string(label), "segments": .number(Double(value.segmentsDone)),
                        "segmentsTotal": .number(Double(value.segmentsTotal)),
                        "bytes": .number(Double(value.bytesWritten)),
                    ])
            }
        }
        do {
            let note = try await PackageExport.write(
                source, from: directory, to: destination, ffmpeg: ffmpeg, renditionsBeside: true, progress: progress,
                warning: { context.writeError("warning: \($0)\n") })
            let size =
                (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?
                .int64Value ?? 0
            let elapsed = started.duration(to: .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            printer.finish(
                "Exported \(directory.path) to \(destination.path) (\(ByteCountText.format(Double(size))), "
                    + "\(ByteCountText.fixed(seconds, digits: 1)) s\(note))",
                fields: [
                    "status": .string("completed"), "path": .string(destination.path), "bytes": .number(Double(size)),
                    "package": .string(directory.path),
                ])
        } catch let error as PackageExportError {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
    }

    /// The package folder: `package` when it is a folder holding a package, else the library entry.
    private func locate(_ context: CommandContext) -> URL {
        var isDirectory: ObjCBool = false
        let expanded = package.hasPrefix("~/") ? (context.environment["HOME"] ?? "~") + package.dropFirst(1) : package
        if package.contains("/")
            || FileManager.default.fileExists(atPath: expanded + "/index.m3u8", isDirectory: &isDirectory)
        {
            return URL(fileURLWithPath: expanded, isDirectory: true)
        }
        let library = StreamKitHome.library(in: home.path(context))
        return URL(fileURLWithPath: library, isDirectory: true).appendingPathComponent(package, isDirectory: true)
    }

    /// ffmpeg's arguments: the main rendition's video, then the alternative audio renditions with
    /// their languages (first, so that their output indices are known), then the main rendition's
    /// own audio, then the subtitles with their languages; streams copied, subtitles converted to
    /// what the container holds.
    static func muxArguments(
        inputs: [URL], audio: [HLSPackage.Rendition], subtitles: [HLSPackage.Rendition], matroska: Bool,
        destination: URL
    ) -> [String] {
        var arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
        for input in inputs { arguments += ["-i", input.path] }
        arguments += ["-map", "0:v?"]
        for index in audio.indices { arguments += ["-map", "\(index + 1):a"] }
        arguments += ["-map", "0:a?"]
        for index in subtitles.indices { arguments += ["-map", "\(audio.count + 1 + index):s"] }
        arguments += ["-c", "copy"]
        if !subtitles.isEmpty { arguments += ["-c:s", matroska ? "srt" : "mov_text"] }
        for (index, rendition) in audio.enumerated() {
            if let language = rendition.language { arguments += ["-metadata:s:a:\(index)", "language=\(language)"] }
        }
        for (index, rendition) in subtitles.enumerated() {
            if let language = rendition.language { arguments += ["-metadata:s:s:\(index)", "language=\(language)"] }
        }
        return arguments + [destination.path]
    }

    /// A subtitle rendition merged into one WebVTT file for ffmpeg to read.
    static func writeMergedSubtitles(
        _ rendition: HLSPackage.Rendition, of directory: URL, to file: URL
    ) throws(PackageExportError) {
        do {
            let merged = try PackageSubtitles.merged(
                folder: directory.appendingPathComponent(rendition.folder, isDirectory: true))
            try Data(merged.serialized().utf8).write(to: file)
        } catch {
            throw PackageExportError("subtitles \(rendition.folder) cannot be merged: \(error)")
        }
    }

    /// Runs ffmpeg; a failure names its arguments and what it printed.
    static func runProcess(_ executable: String, _ arguments: [String]) async throws {
        let outcome: ExternalTool.Outcome
        do {
            outcome = try await ExternalTool.run(executable, arguments)
        } catch {
            throw PackageExportError("\(error)")
        }
        guard outcome.status == 0 else {
            throw PackageExportError(
                "ffmpeg \(arguments.joined(separator: " ")) exited with \(outcome.status): "
                    + "\(outcome.standardError.suffix(1_000))")
        }
    }
}
