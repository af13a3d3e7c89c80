import Foundation
import StreamKitHTTP
import StreamKitHTTPClient

/// A playlist's bytes and where they came from.
struct LoadedPlaylist: Sendable {
    /// The playlist file.
    var bytes: [UInt8]
    /// The playlist's absolute URL (after redirects, for a fetched one): relative URIs resolve against it,
    /// EXT-X-DEFINE QUERYPARAM reads its query.
    var url: URL
}

/// Why a playlist could not be loaded, naming what failed.
struct PlaylistLoadError: Error, CustomStringConvertible {
    let description: String
}

/// Loads the playlist a command names: an http(s) URL is fetched, anything else is a file path.
enum PlaylistLoader {
    /// The largest playlist accepted: a 10^6-segment media playlist is about 100 MB.
    static let maximumPlaylistBytes = 256 << 20

    static func load(_ argument: String) async throws(PlaylistLoadError) -> LoadedPlaylist {
        if let scheme = argument.range(of: "://").map({ argument[..<$0.lowerBound].lowercased() }) {
            guard scheme == "http" || scheme == "https" else {
                throw PlaylistLoadError(description: "\(argument): only http and https URLs (or files) can be read")
            }
            return try await fetch(argument)
        }
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

    private static func fetch(_ address: String) async throws(PlaylistLoadError) -> LoadedPlaylist {
        do {
            let client = try HTTPClient()  // shut down when dropped
            let (head, body) = try await client.data(
                for: HTTPClientRequest(url: address), limit: maximumPlaylistBytes, retry: .default)
            guard head.status.isSuccess else {
                throw PlaylistLoadError(description: "\(head.url): HTTP \(head.status)")
            }
            guard let url = URL(string: head.url) else {
                throw PlaylistLoadError(description: "\(head.url): not a valid URL")
            }
            return LoadedPlaylist(bytes: body, url: url)
        } catch let error as PlaylistLoadError {
            throw error
        } catch {
            throw PlaylistLoadError(description: "\(error)")
        }
    }
}
