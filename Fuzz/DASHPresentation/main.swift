// Fuzz what a DASH download and the DASH proxy make of an MPD: DASHPresentation (the MPD read as
// HLS, a live window on a clock, renumbered by time), SegmentIndex (sidx boxes),
// MPD.withAbsoluteURLs (the /proxy/dash rewrite).
// Run: Fuzz/run.sh DASHPresentation -max_total_time=600 -max_len=16384
import StreamKitDASH
import StreamKitHLS

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    // The same bytes as a sidx box: references within the cap, ranges that follow each other.
    if let index = try? SegmentIndex.parse(bytes, fileOffset: 1000, maximumReferences: 1000) {
        precondition(index.timescale > 0 && index.references.count <= 1000)
        for (reference, next) in zip(index.references, index.references.dropFirst()) {
            precondition(reference.range.first <= reference.range.last)
            precondition(next.range.first == reference.range.last + 1 && next.time >= reference.time)
        }
    }
    let limits = DASHXML.Limits(maximumDepth: 32, maximumElements: 10_000)
    guard let mpd = try? MPD.parse(bytes, limits: limits) else { return 0 }
    let url = "https://example.com/a/manifest.mpd"
    let presentation = DASHPresentation(mpd: mpd, mpdURL: url)
    // Every URI of the multivariant playlist carries a key its media playlist can be made for,
    // within the segment cap, every segment absolute and tagged with its DASH timing.
    let master = presentation.multivariant()
    let uris = master.variants.map(\.uri) + master.renditions.compactMap(\.uri)
    for uri in uris {
        guard let key = DASHPresentation.Key(url: uri) else { preconditionFailure("no key in \(uri)") }
        precondition(presentation.url(of: key) == uri)
        // Without a clock, and on one a day after 2026-12-07 (a live `@duration` window).
        var mark: DASHLiveNumbering.Mark?
        for now in [nil, 1_796_688_000.0] {
            guard let playlist = try? presentation.mediaPlaylist(for: key, maximumSegments: 10_000, now: now)
            else { continue }
            precondition(playlist.segments.count <= 10_000 && playlist.targetDuration ?? 1 >= 1)
            for segment in playlist.segments {
                precondition(segment.duration >= 0 && segment.duration <= 1e9)
                precondition(DASHSegmentTag(lines: segment.extraLines) != nil)
                precondition(segment.byteRange.map { $0.length > 0 } ?? true)
            }
            // Renumbering by time keeps the segments and marks the last.
            let (numbered, next) = DASHLiveNumbering.continuing(playlist, after: mark)
            precondition(numbered.segments.count == playlist.segments.count)
            if let next { precondition(next.sequence == numbered.mediaSequence &+ UInt64(numbered.segments.count - 1)) }
            mark = next
        }
    }
    // The proxy's rewrite: no BaseURL left, every Representation with its own description, and
    // what is written reads back.
    let proxied = mpd.withAbsoluteURLs(mpdURL: url) { "http://127.0.0.1:1/proxy/file?url=" + $0 }
    precondition(proxied.baseURLs.isEmpty)
    for period in proxied.periods {
        precondition(period.baseURLs.isEmpty && period.segments == SegmentInformation())
        for set in period.adaptationSets {
            precondition(set.baseURLs.isEmpty && set.segments == SegmentInformation())
            for representation in set.representations {
                if let media = representation.segments.template?.media {
                    precondition(media.hasPrefix("http://127.0.0.1:1/proxy/file?url="))
                }
                for segment in representation.segments.list?.segments ?? [] {
                    precondition(segment.media?.hasPrefix("http://127.0.0.1:1/proxy/file?url=") == true)
                }
            }
        }
    }
    guard (try? MPD.parse(Array(proxied.serialized().utf8))) != nil else {
        preconditionFailure("rewritten MPD unreadable")
    }
    return 0
}
