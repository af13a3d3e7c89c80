// Fuzz the caching proxy's playlist rewriting (what /proxy/hls serves for any playlist an origin sends).
// Run: Fuzz/run.sh HLSProxyRewriter -max_total_time=600 -max_len=16384 -dict=../../HLSPlaylistParser/hls.dict
// Properties: whatever parses is rewritten to a playlist that is written and parses again with the
// same shape (segment count and durations, variant count); every URI in it that is http(s) goes
// through the proxy's routes, carrying the reference resolved against the playlist's URL, so that
// nothing a player fetches bypasses the cache; rewriting a rewritten playlist changes no segment.
import Foundation
import StreamKitHLS
import StreamKitMediaServer

private let playlistURL = "https://cdn.example.com/live/v1/index.m3u8?token=abc"
private let rewriter = HLSProxyRewriter()

/// Checks one URI of the rewritten playlist against the reference it replaced.
private func check(_ rewritten: String, original: String, isPlaylist: Bool) {
    let target = resolveURI(original, against: playlistURL)
    let scheme = target.prefix { $0 != ":" }.lowercased()
    guard scheme == "http" || scheme == "https" else {
        precondition(rewritten == target, "a non-http URI was not left resolved: \(original) -> \(rewritten)")
        return
    }
    let route = (isPlaylist ? rewriter.playlistRoute : rewriter.fileRoute) + "?url="
    precondition(rewritten.hasPrefix(route), "\(original) escapes the proxy: \(rewritten)")
    let value = String(rewritten.dropFirst(route.count))
    precondition(value.removingPercentEncoding == target, "\(original): the proxy URL carries \(value), not \(target)")
    precondition(!value.contains("&") && !value.contains("#"), "the query value is not fully encoded: \(value)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let options = PlaylistParseOptions(playlistURL: URL(string: playlistURL)!)
    guard let parsed = try? Playlist.parse(bytes, options: options) else { return 0 }
    let rewritten = rewriter.rewrite(parsed.playlist, playlistURL: playlistURL)
    let text = rewritten.serialized()
    let again: ParsedPlaylist
    do {
        again = try Playlist.parse(text)
    } catch {
        fatalError("the rewritten playlist does not parse: \(error)\n\(text)")
    }
    switch (parsed.playlist, rewritten, again.playlist) {
    case (.media(let before), .media(let after), .media(let reparsed)):
        precondition(after.segments.count == before.segments.count, "segments were added or lost")
        precondition(reparsed.segments.count == after.segments.count, "the written playlist lost segments")
        for (old, new) in zip(before.segments, after.segments) {
            precondition(old.duration == new.duration, "a duration changed")
            check(new.uri, original: old.uri, isPlaylist: false)
            if let map = new.map, let oldMap = old.map { check(map.uri, original: oldMap.uri, isPlaylist: false) }
            for (key, oldKey) in zip(new.keys, old.keys) {
                if let uri = key.uri, let oldURI = oldKey.uri { check(uri, original: oldURI, isPlaylist: false) }
            }
        }
        // A rewritten playlist served again (a player's reload through a second proxy) keeps its segments.
        if case .media(let twice) = rewriter.rewrite(.media(after), playlistURL: "http://127.0.0.1:1/proxy/hls") {
            precondition(twice.segments.count == after.segments.count, "rewriting twice changed the segment count")
        }
    case (.multivariant(let before), .multivariant(let after), .multivariant(let reparsed)):
        precondition(after.variants.count == before.variants.count, "variants were added or lost")
        precondition(reparsed.variants.count == after.variants.count, "the written playlist lost variants")
        for (old, new) in zip(before.variants, after.variants) { check(new.uri, original: old.uri, isPlaylist: true) }
        for (old, new) in zip(before.renditions, after.renditions) {
            if let uri = new.uri, let oldURI = old.uri { check(uri, original: oldURI, isPlaylist: true) }
        }
    default:
        fatalError("the rewrite changed the playlist's kind")
    }
    return 0
}
