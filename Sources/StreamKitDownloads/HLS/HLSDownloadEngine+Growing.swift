import Foundation
import StreamKitCore
import StreamKitHLS
import Synchronization

/// The growing playlists of a package being downloaded or recorded: what was written, and how far
/// each rendition's ready head reached (it only grows while the transfer runs).
struct GrowingPlaylists: Sendable {
    var gate = GrowingPlaylistGate(interval: .seconds(1))
    /// Segments from the first on in place or given up, per rendition.
    var ready: [Int] = []
    /// `index.m3u8` was written by this run.
    var indexWritten = false
    /// The prefix last aligned, and what it was aligned from: a tick that changed none of it
    /// reuses it rather than walk every segment's duration again.
    var aligned: (inputs: PrefixInputs, prefix: PlayablePrefix)?

    /// What the aligned prefix depends on besides the durations of segments already planned.
    struct PrefixInputs: Equatable {
        var ready: [Int]
        var planned: [Int]
        var ended: [Bool]
    }
}

/// Where a file a segment needs stands, for its playlist.
enum SegmentFileReadiness {
    /// In place.
    case ready
    /// Given up (`--skip-broken`): the segment is a gap.
    case gap
    /// Not there yet.
    case pending
}

extension HLSDownloadEngine {
    /// Writes the package's playlists as growing EVENT playlists of the completed head (and
    /// `index.m3u8` the first time), when the head grew and ``GrowingPlaylistGate`` allows. Not
    /// once every segment is ready: the final VOD playlists come next. A failed write is tried
    /// again at the next call; the download does not depend on it.
    func publishGrowingPlaylists() {
        let start = ContinuousClock.now
        let due = state.withLock { state -> (PlayablePrefix, [Composition], MultivariantPlaylist?)? in
            let prefix = advancePrefix(in: &state)
            let planned = state.renditions.map(\.segments.count)
            let complete = zip(prefix.counts, planned).allSatisfy { $0 == $1 } && state.renditions.allSatisfy(\.ended)
            guard !complete,
                state.growing.gate.isDue(prefix, playable: prefix.isPlayable(segmentCounts: planned), at: start)
            else { return nil }
            var compositions: [Composition] = []
            for index in state.renditions.indices {
                let rendition = state.renditions[index]
                // The head is read in place, outside the lock, with the segments given up so far
                // passed beside it: a live recording's append meanwhile copies only the chunk it
                // writes to (``ChunkedArray``), not every segment.
                let segments = rendition.segments[..<prefix.counts[index]]
                let gaps = Set(
                    segments.indices.filter { readiness(of: segments[$0], rendition: index, in: state) == .gap })
                let longest = rendition.segments.reduce(0.0) { max($0, $1.segment.duration) }
                compositions.append(
                    Composition(
                        folder: rendition.selected.folder, segments: segments, gaps: gaps, header: rendition.header,
                        targetDuration: longest.isFinite ? Int(saturating: longest.rounded()) : 0))
            }
            let master =
                state.growing.indexWritten
                ? nil
                : MasterComposer.compose(
                    master: state.master, masterURL: state.masterURL, variant: state.variant,
                    renditions: state.renditions.map(\.selected), measured: measuredBandwidth(in: state))
            return (prefix, compositions, master)
        }
        guard let (prefix, compositions, master) = due else { return }
        let gaps: PlaylistComposer.GapForm = options.gapTags ? .tagged : .omitted
        do {
            // Media playlists first: a player that finds index.m3u8 finds what it lists.
            for composition in compositions {
                let playlist = PlaylistComposer.compose(
                    composition.segments, alsoSkipped: composition.gaps, header: composition.header, target: .local,
                    gaps: gaps,
                    ending: .growing(targetDuration: composition.targetDuration))
                try PackageStore.writeAtomically(
                    Data(playlist.serialized().utf8),
                    to: URL(fileURLWithPath: path(composition.folder + "/" + PackageLayout.mediaPlaylistName)))
            }
            if let master {
                try PackageStore.writeAtomically(
                    Data(master.serialized().utf8), to: URL(fileURLWithPath: path(PackageLayout.indexName)))
            }
        } catch {
            logger.warning("writing the playlists of the downloaded head: \(error)")
            return
        }
        state.withLock { state in
            if master != nil { state.growing.indexWritten = true }
            state.growing.gate.written(prefix, startedAt: start, endedAt: .now)
        }
    }

    /// One rendition's growing playlist, to compose outside the lock.
    struct Composition {
        var folder: String
        var segments: Slice<ChunkedArray<RecordedSegment>>
        /// Positions in `segments` given up so far (`--skip-broken`): written as gaps.
        var gaps: Set<Int>
        var header: MediaPlaylistHeader
        var targetDuration: Int
    }

    /// Moves each rendition's ready head past the segments that became ready, and aligns them.
    private func advancePrefix(in state: inout EngineState) -> PlayablePrefix {
        if state.growing.ready.count != state.renditions.count {
            state.growing.ready = Array(repeating: 0, count: state.renditions.count)
        }
        for index in state.renditions.indices {
            let segments = state.renditions[index].segments
            var ready = min(state.growing.ready[index], segments.count)
            while ready < segments.count, readiness(of: segments[ready], rendition: index, in: state) != .pending {
                ready += 1
            }
            state.growing.ready[index] = ready
        }
        let inputs = GrowingPlaylists.PrefixInputs(
            ready: state.growing.ready, planned: state.renditions.map(\.segments.count),
            ended: state.renditions.map(\.ended))
        if let aligned = state.growing.aligned, aligned.inputs == inputs { return aligned.prefix }
        let prefix = PlayablePrefix.aligned(
            state.renditions.indices.map { index in
                PlayablePrefix.Rendition(
                    durations: state.renditions[index].segments.map(\.segment.duration), ready: inputs.ready[index],
                    complete: inputs.ended[index])
            })
        state.growing.aligned = (inputs, prefix)
        return prefix
    }

    /// Where a segment stands: pending while its file, its map or a key its playlist names is
    /// not in place; a gap when its file or map was given up; ready otherwise.
    func readiness(of segment: RecordedSegment, rendition: Int, in state: EngineState) -> SegmentFileReadiness {
        var result = SegmentFileReadiness.ready
        let files: [(String, ByteRange?)] = [
            segment.file.map { ($0, segment.local.range) }, segment.mapFile.map { ($0, segment.localMap?.range) },
        ].compactMap { $0 }
        for (path, range) in files {
            guard let fileIndex = state.books.fileIndex[path] else { continue }
            switch state.books.states[fileIndex] {
            case .done:
                break
            case .skipped:
                // A byte-range file placed with some ranges missing: only segments over those are gaps.
                if let failed = state.books.ranged[fileIndex]?.failed, !failed.isEmpty, let range,
                    failed.intersection(range).isEmpty
                {
                    break
                }
                result = .gap
            case .pending:
                return .pending
            }
        }
        let folder = state.renditions[rendition].selected.folder
        for key in segment.localKeys + segment.localMapKeys {
            guard let uri = key.uri, let fileIndex = state.books.fileIndex[folder + "/" + uri] else { continue }
            if !state.books.states[fileIndex].isDone { return .pending }
        }
        return result
    }
}
