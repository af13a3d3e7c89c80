import Foundation
import StreamKitHLS

/// The playlists in `Tests/StreamKitHLSTests/Corpus`, copied from /work/shared/corpus/hls (see its README.md for the
/// projects they come from; each folder keeps its LICENSE).
enum Corpus {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    /// `folder/file.m3u8` for every playlist in the corpus.
    static func allFiles() throws -> [String] {
        var files: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: root.path) {
            var isDirectory: ObjCBool = false
            guard
                FileManager.default.fileExists(
                    atPath: root.appendingPathComponent(folder).path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { continue }
            for file in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)
            where file.hasSuffix(".m3u8") {
                files.append("\(folder)/\(file)")
            }
        }
        return files.sorted()
    }

    static func bytes(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(file)))
    }

    static func parse(_ file: String, options: PlaylistParseOptions = .lenient) throws -> ParsedPlaylist {
        try Playlist.parse(try bytes(file), options: options)
    }

    static func media(_ file: String) throws -> MediaPlaylist {
        guard case .media(let playlist) = try parse(file).playlist else {
            throw CorpusError("\(file) is not a media playlist")
        }
        return playlist
    }

    static func multivariant(_ file: String) throws -> MultivariantPlaylist {
        guard case .multivariant(let playlist) = try parse(file).playlist else {
            throw CorpusError("\(file) is not a multivariant playlist")
        }
        return playlist
    }
}

struct CorpusError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
