import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// Cuts the byte ranges a playlist uses in one resource into requests: adjacent (or overlapping)
/// ranges are merged into one run, and a long run is cut, at range boundaries, into pieces of about
/// `total / connections` bytes (at least `minimumPieceBytes`) so that several connections share it.
/// Pure.
enum RangePiecePlanner {
    /// The requests for `parts` (sorted by offset), each with the number of parts starting in it.
    static func pieces(
        parts: [ByteRange], connections: Int, minimumPieceBytes: Int64
    ) -> [(range: ByteRange, units: Int)] {
        guard let first = parts.first else { return [] }
        let total = ByteRangeSet(parts).byteCount
        let target = max(minimumPieceBytes, (total + Int64(connections) - 1) / Int64(max(connections, 1)), 1)
        var pieces: [(range: ByteRange, units: Int)] = []
        var start = first.lowerBound
        var end = first.lowerBound
        var units = 0
        for part in parts {
            if part.lowerBound > end || (end - start >= target && part.lowerBound == end && !part.isEmpty) {
                if end > start { pieces.append((ByteRange(start, end), units)) }
                start = part.lowerBound
                end = part.lowerBound
                units = 0
            }
            end = max(end, part.upperBound)
            units += 1
        }
        if end > start {
            pieces.append((ByteRange(start, end), units))
        } else if !pieces.isEmpty {
            pieces[pieces.count - 1].units += units
        }
        return pieces
    }
}

/// `FILE.streamkit-ranges`: which bytes of a byte-range file's partial data are in place, and the
/// validator they were fetched under. Saved when a piece ends (done, failed or cancelled).
struct RangesRecord: Codable, Sendable {
    var url: String
    var entityTag: String?
    var lastModified: String?
    var done: ByteRangeSet

    init(url: String, validator: HTTPClientRequest.IfRange?, done: ByteRangeSet) {
        self.url = url
        self.done = done
        switch validator {
        case .entityTag(let tag): entityTag = tag.headerValue
        case .lastModified(let date): lastModified = HTTPDate.format(date)
        case nil: break
        }
    }

    var validator: HTTPClientRequest.IfRange? {
        if let tag = entityTag.flatMap(EntityTag.init(headerValue:)), !tag.isWeak { return .entityTag(tag) }
        return lastModified.flatMap(HTTPDate.parse).map { .lastModified($0) }
    }

    static func load(_ path: String) -> RangesRecord? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(RangesRecord.self, from: data)
    }

    func save(_ path: String) throws(HLSDownloadError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(self)
        } catch {
            throw HLSDownloadError(.writeFailed, detail: "\(error)")
        }
        try PackageStore.writeAtomically(data, to: URL(fileURLWithPath: path))
    }
}

/// Which segments of a reloaded live playlist to take. Pure.
enum LiveWindow {
    /// The segments after `lastSequence` (all when `nil`), up to `limit` seconds of recording.
    ///
    /// - Returns: The entries to take; whether segments were missed since `lastSequence` (the first
    ///   entry then needs EXT-X-DISCONTINUITY); whether the limit is reached.
    static func take(
        _ entries: [(segment: MediaSegment, resolved: ResolvedSegment)], after lastSequence: UInt64?,
        recordedDuration: Double, limit: Double?
    ) -> (entries: [(segment: MediaSegment, resolved: ResolvedSegment)], missed: Bool, reachedLimit: Bool) {
        var recorded = recordedDuration
        if let limit, recorded >= limit { return ([], false, true) }
        let fresh = entries.filter { entry in lastSequence.map { entry.resolved.mediaSequence > $0 } ?? true }
        var taken: [(segment: MediaSegment, resolved: ResolvedSegment)] = []
        for entry in fresh {
            if let limit, recorded >= limit { break }
            taken.append(entry)
            recorded += entry.segment.duration
        }
        let missed = lastSequence.map { last in (taken.first?.resolved.mediaSequence ?? last) > last &+ 1 } ?? false
        if missed { taken[0].segment.isDiscontinuity = true }
        return (taken, missed, limit.map { recorded >= $0 } ?? false)
    }
}
