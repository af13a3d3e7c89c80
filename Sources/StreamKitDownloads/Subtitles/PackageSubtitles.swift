import Foundation
import StreamKitHLS

/// The format of the merged subtitle files (`--subs-format`).
public enum SubtitleFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// WebVTT (`.vtt`).
    case vtt
    /// SubRip (`.srt`).
    case srt
}

/// One file per subtitle rendition of a package, beside the rendition's folder:
/// `ID/subtitles-eng/` (the segments players read) gives `ID/subtitles-eng.vtt` or `.srt`. The
/// package's playlists are left as they are.
public enum PackageSubtitles {
    /// What became of one subtitle rendition.
    public struct Outcome: Hashable, Sendable {
        /// The rendition's folder.
        public let folder: String
        /// The merged file, or `nil` when the rendition could not be merged.
        public let file: URL?
        /// How many cues the file holds.
        public let cues: Int
        /// Why there is no file (segments that are not WebVTT, a missing playlist).
        public let problem: String?
    }

    /// Merges every subtitle rendition of the package in `directory` into a file of `format`.
    /// Segments that are gaps (not in the package) are left out of the merge.
    ///
    /// - Throws: ``HLSDownloadError`` when the manifest cannot be read or a file cannot be written.
    public static func write(in directory: URL, format: SubtitleFormat) throws(HLSDownloadError) -> [Outcome] {
        guard let manifest = try PackageStore.load(from: directory) else { return [] }
        var outcomes: [Outcome] = []
        for rendition in manifest.renditions where rendition.role == RenditionRole.subtitles.rawValue {
            let folder = directory.appendingPathComponent(rendition.folder, isDirectory: true)
            let merged: WebVTTFile
            do {
                merged = try self.merged(folder: folder)
            } catch {
                outcomes.append(Outcome(folder: rendition.folder, file: nil, cues: 0, problem: error.description))
                continue
            }
            let text = format == .vtt ? merged.serialized() : SubRipWriter.text(of: merged)
            let file = directory.appendingPathComponent(rendition.folder + "." + format.rawValue)
            try PackageStore.writeAtomically(Data(text.utf8), to: file)
            outcomes.append(Outcome(folder: rendition.folder, file: file, cues: merged.cues.count, problem: nil))
        }
        return outcomes
    }

    /// The subtitle rendition in `folder` (its playlist and WebVTT segments) merged into one file.
    ///
    /// - Throws: ``WebVTTFile/ParseError`` when the playlist is missing or a segment is not WebVTT.
    public static func merged(folder: URL) throws(WebVTTFile.ParseError) -> WebVTTFile {
        WebVTTMerge.merge(try segments(in: folder))
    }

    /// The WebVTT segments the rendition's playlist in `folder` lists, in order.
    private static func segments(in folder: URL) throws(WebVTTFile.ParseError) -> [WebVTTFile] {
        let playlistURL = folder.appendingPathComponent(PackageLayout.mediaPlaylistName)
        guard let data = try? Data(contentsOf: playlistURL),
            case .media(let playlist) = try? Playlist.parse(data).playlist
        else {
            throw WebVTTFile.ParseError(description: "\(playlistURL.path) is not a media playlist")
        }
        var files: [WebVTTFile] = []
        for segment in playlist.segments where !segment.isGap {
            // Package playlists name files in the folder (PackageLayout); anything else is not ours.
            guard !segment.uri.contains("/"),
                let data = try? Data(contentsOf: folder.appendingPathComponent(segment.uri))
            else { continue }
            do {
                files.append(try WebVTTFile.parse(String(decoding: data, as: UTF8.self)))
            } catch {
                throw WebVTTFile.ParseError(description: "\(segment.uri): \(error.description)")
            }
        }
        return files
    }
}
