import Foundation
import StreamKitDASH
import StreamKitDownloads

/// The demo's DASH step: the package's `manifest.mpd` read as a DASH player reads it.
extension DemoRun {
    /// Fetches the package's `manifest.mpd` through `server`, resolves every Representation's
    /// init section and segments as a DASH player would (SegmentTemplate, SegmentTimeline,
    /// SegmentList or byte ranges of one file), and compares each file it names, whole, with what
    /// the origin serves for it (fetched now, or remembered from the first pass).
    func verifyDASH(
        _ manifest: PackageManifest, id: String, server: String, fetchOrigin: Bool
    ) async throws -> Checked {
        let base = server + "library/\(id)/"
        let mpdURL = base + "manifest.mpd"
        let mpd: MPD
        do {
            mpd = try MPD.parse(try await fetch(mpdURL, what: "the offline manifest.mpd"))
        } catch let error as DemoFailure {
            throw error
        } catch {
            throw DemoFailure("the offline manifest.mpd does not parse: \(error)")
        }
        let sources = Dictionary(manifest.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var checked = Checked()
        checked.mpds = 1
        var compared = Set<String>()
        for (periodIndex, period) in mpd.periods.enumerated() {
            for set in period.adaptationSets {
                for representation in set.representations {
                    let resolved: ResolvedRepresentation
                    do {
                        resolved = try mpd.resolve(
                            periodIndex: periodIndex, adaptationSet: set, representation: representation,
                            mpdURL: mpdURL)
                    } catch {
                        throw DemoFailure("the offline manifest.mpd cannot be resolved: \(error)")
                    }
                    let files =
                        (resolved.initialization.map { [($0.url, "map")] } ?? [])
                        + resolved.segments.map { ($0.url, "segment") }
                    for (url, kind) in files where compared.insert(url).inserted {
                        guard url.hasPrefix(base), let source = sources[String(url.dropFirst(base.count))] else {
                            throw DemoFailure("the offline manifest.mpd names \(url), which the package does not list")
                        }
                        let count = try await fetchSame(
                            url, what: "the offline file \(url.dropFirst(base.count))", as: source.url,
                            fetchOrigin: fetchOrigin)
                        checked.add(kind, bytes: count)
                    }
                }
            }
        }
        guard checked.segments > 0 else { throw DemoFailure("the offline manifest.mpd lists no segment") }
        return checked
    }
}
