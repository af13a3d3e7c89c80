// Fuzz the MPD reader: DASHXML, MPD.parse and every Representation's segment resolution.
// Run: Fuzz/run.sh MPDParser -max_total_time=600 -max_len=16384
import StreamKitDASH

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let limits = DASHXML.Limits(maximumDepth: 32, maximumElements: 10_000)
    guard let root = try? DASHXML.parse(bytes, limits: limits) else { return 0 }
    // What reads holds to its limits.
    var stack = [(root, 1)]
    var elements = 0
    while let (element, depth) = stack.popLast() {
        elements += 1
        precondition(depth <= 32 && element.attributes.count <= 256)
        precondition(Set(element.attributes.map(\.name)).count == element.attributes.count)
        stack += element.children.map { ($0, depth + 1) }
    }
    precondition(elements <= 10_000)
    guard let mpd = try? MPD.parse(bytes, limits: limits) else { return 0 }
    // What is written reads back, and writes the same text again.
    let written = mpd.serialized()
    guard let again = try? MPD.parse(Array(written.utf8)) else { preconditionFailure("written MPD unreadable") }
    precondition(again.serialized() == written)
    // Resolution is bounded: at most the segments asked for, URLs resolved against an absolute base.
    for (index, period) in mpd.periods.enumerated() {
        for set in period.adaptationSets {
            for representation in set.representations {
                guard
                    let resolved = try? mpd.resolve(
                        periodIndex: index, adaptationSet: set, representation: representation,
                        mpdURL: "https://example.com/a/manifest.mpd", maximumSegments: 10_000)
                else { continue }
                precondition(resolved.segments.count <= 10_000)
                precondition(resolved.segments.allSatisfy { $0.duration >= 0 })
            }
        }
    }
    return 0
}
