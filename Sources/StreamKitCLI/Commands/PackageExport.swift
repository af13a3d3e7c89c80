import Foundation
import StreamKitDownloads

/// Writes a downloaded package as one file: what `streamkit export` does, and what serve's player
/// page offers as "download as mp4".
public enum PackageExport {
    /// Writes the package `source` (in `directory`) to `destination`, whose extension chooses the
    /// container (.ts, .mp4, .mkv): the main rendition's segments concatenated when they are
    /// already in it and nothing else is to be added (or ffmpeg is missing), else every rendition
    /// (main, audio, merged subtitles) remuxed by `ffmpeg` with stream copy.
    ///
    /// - Parameters:
    ///   - renditionsBeside: Without ffmpeg, write the alternative renditions as files of their
    ///     own beside `destination` rather than leave them out.
    ///   - progress: Called with a rendition's folder, returns what receives its progress.
    ///   - warning: Told what was left out and why.
    /// - Returns: What the result adds to its line: `; remuxed with ffmpeg`, or what was left out.
    /// - Throws: ``PackageExportError``, also when remuxing is needed and ffmpeg is missing.
    static func write(
        _ source: HLSPackage, from directory: URL, to destination: URL, ffmpeg: String?,
        renditionsBeside: Bool = false,
        progress: (String) -> (PackageExportProgress) -> Void, warning: (String) -> Void
    ) async throws -> String {
        let lower = destination.lastPathComponent.lowercased()
        let matroska = lower.hasSuffix(".mkv")
        let wanted: SegmentContainer = lower.hasSuffix(".mp4") ? .fragmentedMP4 : .transportStream
        // MPEG-TS output holds no text subtitles.
        let subtitles = lower.hasSuffix(".ts") ? [] : source.subtitles
        let container = PackageExporter.container(of: source.main, in: source)
        if !matroska && container == wanted && ((source.audio.isEmpty && subtitles.isEmpty) || ffmpeg == nil) {
            try PackageExporter.concatenate(
                source.main, of: source, to: destination, progress: progress(source.main.folder))
            guard !source.audio.isEmpty || !subtitles.isEmpty else { return "" }
            guard renditionsBeside else {
                let folders = (source.audio + subtitles).map(\.folder).joined(separator: ", ")
                warning("\(folders) not exported: adding them needs ffmpeg")
                return "; alternative renditions left out (ffmpeg is not installed)"
            }
            return try writeBeside(
                source, subtitles: subtitles, from: directory, to: destination, container: wanted,
                progress: progress, warning: warning)
        }
        guard let ffmpeg else {
            throw PackageExportError(
                "the segments are \(container == .fragmentedMP4 ? "fragmented MP4" : "MPEG-TS"); "
                    + "writing \(destination.lastPathComponent) needs ffmpeg to remux (not installed); "
                    + "export to .\(container.rawValue) instead")
        }
        var inputs: [URL] = []
        defer { for input in inputs { try? FileManager.default.removeItem(at: input) } }
        for (index, rendition) in ([source.main] + source.audio).enumerated() {
            let kind = PackageExporter.container(of: rendition, in: source)
            let input = URL(fileURLWithPath: destination.path + ".streamkit-part\(index).\(kind.rawValue)")
            inputs.append(input)
            try PackageExporter.concatenate(rendition, of: source, to: input, progress: progress(rendition.folder))
        }
        for rendition in subtitles {
            let input = URL(fileURLWithPath: destination.path + ".streamkit-part\(inputs.count).vtt")
            inputs.append(input)
            try ExportCommand.writeMergedSubtitles(rendition, of: directory, to: input)
        }
        try await ExportCommand.runProcess(
            ffmpeg,
            ExportCommand.muxArguments(
                inputs: inputs, audio: source.audio, subtitles: subtitles, matroska: matroska,
                destination: destination))
        return "; remuxed with ffmpeg"
    }

    /// Without ffmpeg to join them: every alternative audio rendition in `container` written
    /// beside `destination` as a file of its own (`talk.mp4` → `talk.audio-eng.mp4`), every
    /// subtitle rendition merged into a WebVTT file (`talk.subs-eng.vtt`); audio in another
    /// container is left out. Tells `warning` which is which.
    ///
    /// - Returns: What the result adds to its line.
    private static func writeBeside(
        _ source: HLSPackage, subtitles: [HLSPackage.Rendition], from directory: URL, to destination: URL,
        container: SegmentContainer, progress: (String) -> (PackageExportProgress) -> Void,
        warning: (String) -> Void
    ) throws -> String {
        let stem = destination.deletingPathExtension()
        func beside(_ rendition: HLSPackage.Rendition, _ ext: String) -> URL {
            URL(fileURLWithPath: stem.path + "." + rendition.folder + "." + ext)
        }
        var written: [String] = []
        var leftOut: [String] = []
        for rendition in source.audio {
            guard PackageExporter.container(of: rendition, in: source) == container else {
                leftOut.append(rendition.folder)
                continue
            }
            let file = beside(rendition, destination.pathExtension)
            try PackageExporter.concatenate(rendition, of: source, to: file, progress: progress(rendition.folder))
            written.append(file.lastPathComponent)
        }
        for rendition in subtitles {
            let file = beside(rendition, "vtt")
            try ExportCommand.writeMergedSubtitles(rendition, of: directory, to: file)
            written.append(file.lastPathComponent)
        }
        if !written.isEmpty {
            let files = written.joined(separator: ", ")
            warning("\(files) written beside \(destination.lastPathComponent): joining them into it needs ffmpeg")
        }
        if !leftOut.isEmpty {
            warning("\(leftOut.joined(separator: ", ")) not exported: adding them needs ffmpeg")
        }
        return leftOut.isEmpty
            ? "; \(written.count) rendition\(written.count == 1 ? "" : "s") as files of their own (ffmpeg is not installed)"
            : "; alternative renditions left out (ffmpeg is not installed)"
    }

    /// What serve's player page calls for "download as mp4": the package in `folder` (id `id`)
    /// written once to `exports`/ID.mp4 and kept while it is newer than the package's
    /// `package.json` and `index.m3u8`; returns its path. Written under a name of its own and
    /// renamed into place, so that two requests at once each get a whole file.
    public static func mp4Exporter(
        exports: String, environment: [String: String]
    ) -> @Sendable (_ folder: String, _ id: String) async throws -> String {
        { folder, id in
            let (destination, temporary) = try place(id + ".mp4", in: exports)
            if isKept(destination, for: folder) { return destination }
            defer { try? FileManager.default.removeItem(atPath: temporary) }
            let packageFolder = URL(fileURLWithPath: folder, isDirectory: true)
            _ = try await write(
                try HLSPackage(directory: packageFolder), from: packageFolder,
                to: URL(fileURLWithPath: temporary),
                ffmpeg: ExternalTool.find("ffmpeg", environment: environment), progress: { _ in { _ in } },
                warning: { _ in })
            guard rename(temporary, destination) == 0 else {
                throw PackageExportError(
                    "cannot move the export into \(destination): \(String(cString: strerror(errno)))")
            }
            return destination
        }
    }

    /// What serve's player page calls for the poster of a package without a cover: one frame,
    /// a second in (or the first, for a shorter package), at most 640 pixels wide, taken by
    /// `ffmpeg` from the package's playlist and kept as `exports`/ID.jpg while newer than the
    /// package's `package.json` and `index.m3u8`; returns its path.
    public static func posterMaker(
        exports: String, ffmpeg: String
    ) -> @Sendable (_ folder: String, _ id: String) async throws -> String {
        { folder, id in
            let (destination, temporary) = try place(id + ".jpg", in: exports)
            if isKept(destination, for: folder) { return destination }
            defer { try? FileManager.default.removeItem(atPath: temporary) }
            // Local files only (segments, keys, maps of the package), whatever their extension.
            let input = [
                "-nostdin", "-v", "error", "-protocol_whitelist", "file,crypto,data", "-allowed_extensions", "ALL",
            ]
            let output = ["-frames:v", "1", "-vf", "scale='min(640,iw)':-2", "-y", temporary]
            for start in ["1", "0"] {
                try? await ExportCommand.runProcess(
                    ffmpeg, input + ["-ss", start, "-i", folder + "/index.m3u8"] + output)
                let size = (try? FileManager.default.attributesOfItem(atPath: temporary)[.size] as? Int) ?? 0
                if size > 0, rename(temporary, destination) == 0 { return destination }
            }
            throw PackageExportError("ffmpeg took no frame from \(folder)")
        }
    }

    /// Where `name` is kept in `exports` (made 0700 if missing), and a temporary name of its own
    /// beside it to write it under before renaming it into place.
    private static func place(_ name: String, in exports: String) throws -> (destination: String, temporary: String) {
        try FileManager.default.createDirectory(
            atPath: exports, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return (exports + "/" + name, exports + "/.\(UUID().uuidString.prefix(8))-" + name)
    }

    /// Whether the file at `path` was made from the package in `folder` as it is now: it is
    /// newer than the package's `package.json`, the journal of checkpoints that continues it
    /// while it downloads, and `index.m3u8`.
    private static func isKept(_ path: String, for folder: String) -> Bool {
        guard let made = modified(path) else { return false }
        return [folder + "/package.json", folder + "/.streamkit/package.journal", folder + "/index.m3u8"].allSatisfy {
            (modified($0) ?? 0) <= made
        }
    }

    /// A file's modification time in seconds, if it exists.
    private static func modified(_ path: String) -> Double? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
    }
}
