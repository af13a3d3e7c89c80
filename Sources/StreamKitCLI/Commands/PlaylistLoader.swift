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
        return LoadedPlaylist(bytes: try readFile(url.path, named: argument), url: url)
    }

    /// The file's bytes, read straight into the array the parser takes (through `Data` the file
    /// would be in memory twice while it is copied).
    private static func readFile(_ path: String, named argument: String) throws(PlaylistLoadError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PlaylistLoadError(description: "\(argument): cannot be read") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw PlaylistLoadError(description: "\(argument): cannot be read")
        }
        guard status.st_size <= maximumPlaylistBytes else {
            throw PlaylistLoadError(description: "\(argument): larger than \(maximumPlaylistBytes >> 20) MiB")
        }
        // One byte past the size, to notice a file that grows while it is read.
        let capacity = Int(status.st_size) + 1
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            while count < capacity {
                let got = read(descriptor, buffer.baseAddress! + count, capacity - count)
                if got < 0 && errno == EINTR { continue }
                if got < 0 { failed = true }
                if got <= 0 { break }
                count += got
            }
        }
        guard !failed else { throw PlaylistLoadError(description: "\(argument): cannot be read") }
        guard bytes.count < capacity else {
            throw PlaylistLoadError(description: "\(argument): changed while it was read")
        }
        return bytes
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
