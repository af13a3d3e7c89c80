// Fuzz the HLS playlist parser and writer.
// Run: Fuzz/run.sh HLSPlaylistParser -max_total_time=600 -max_len=16384 -dict=../../HLSPlaylistParser/hls.dict
// Property: whatever parses (leniently) is written canonically and parses back to an equal model; strict
// parsing and resolving segments never crash.
import Foundation
import StreamKitHLS

private let playlistURL = URL(string: "https://example.com/live/index.m3u8?token=abc&v=1")!
private let imported = ["base": "https://cdn.example.com", "token": "xyz"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let options = PlaylistParseOptions(playlistURL: playlistURL, importedVariables: imported)
    var strict = options
    strict.strictness = .strict
    let strictResult = try? Playlist.parse(bytes, options: strict)
    guard let parsed = try? Playlist.parse(bytes, options: options) else {
        precondition(strictResult == nil, "strict mode accepted what lenient mode rejected")
        return 0
    }
    if let strictResult { precondition(strictResult.playlist == parsed.playlist, "strict and lenient models differ") }
    let text = parsed.playlist.serialized()
    let again: ParsedPlaylist
    do {
        again = try Playlist.parse(text, options: options)
    } catch {
        fatalError("written playlist does not parse: \(error)\n\(text)")
    }
    precondition(again.playlist == parsed.playlist, "round trip changed the model:\n\(text)")
    precondition(again.playlist.serialized() == text, "writing is not stable:\n\(text)")
    if case .media(let media) = parsed.playlist {
        let resolved = media.resolvedSegments(baseURL: playlistURL.absoluteString)
        precondition(resolved.count == media.segments.count)
    }
    return 0
}
