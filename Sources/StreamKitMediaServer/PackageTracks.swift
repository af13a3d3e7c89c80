import Foundation
import StreamKitHLS

/// What a package offers to watch, read from its `index.m3u8`: the variants (resolution,
/// bandwidth, codecs) and the audio and subtitle renditions (name, language). Empty lists for a
/// package whose playlist is a media playlist (one rendition, nothing to choose).
struct PackageTracks: Hashable, Sendable {
    struct Variant: Hashable, Sendable {
        var resolution: String?
        var bandwidth: Int
        var codecs: String?
    }

    struct Rendition: Hashable, Sendable {
        var name: String
        var language: String?
    }

    var variants: [Variant] = []
    var audio: [Rendition] = []
    var subtitles: [Rendition] = []

    /// The tracks of the playlist at `path`; none when it is missing, not a playlist, or a media
    /// playlist.
    static func read(playlist path: String) -> PackageTracks {
        guard let data = FileManager.default.contents(atPath: path),
            let multivariant = (try? Playlist.parse(data))?.playlist.multivariant
        else { return PackageTracks() }
        var tracks = PackageTracks()
        tracks.variants = multivariant.variants.map { variant in
            Variant(
                resolution: variant.resolution.map { "\($0.width)x\($0.height)" }, bandwidth: variant.bandwidth,
                codecs: variant.codecs)
        }
        for rendition in multivariant.renditions {
            let entry = Rendition(name: rendition.name, language: rendition.language)
            switch rendition.type {
            case .audio: tracks.audio.append(entry)
            case .subtitles: tracks.subtitles.append(entry)
            default: continue
            }
        }
        return tracks
    }
}
