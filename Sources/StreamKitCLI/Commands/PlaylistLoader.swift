import Foundation

/// A playlist's bytes and where they came from.
struct LoadedPlaylist: Sendable {
    /// The playlist file.
    var bytes: [UInt8]
    /// The playlist's absolute URL: relative URIs resolve against it, EXT-X-DEFINE QUERYPARAM reads its query.
    var url: URL
}

/// Why a playlist could not be loaded, naming what failed.
struct PlaylistLoadError: Error, CustomStringConvertible {
    let description: String
}

/// Loads the playlist a command names.
///
/// Files only for now: every argument is a path. Fetching http(s) URLs is one more case here once the HTTP
/// client is in the package.
enum PlaylistLoader {
    static func load(_ argument: String) throws(PlaylistLoadError) -> LoadedPlaylist {
        let url = URL(fileURLWithPath: argument).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw PlaylistLoadError(description: "\(argument): no such file")
        }
        guard !isDirectory.boolValue else { throw PlaylistLoadError(description: "\(argument): is a directory") }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw PlaylistLoadError(description: "\(argument): cannot be read")
        }
        return LoadedPlaylist(bytes: Array(data), url: url)
    }
}
