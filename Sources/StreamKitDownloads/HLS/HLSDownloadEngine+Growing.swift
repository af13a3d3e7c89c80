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
    /// What each rendition's playlist file holds, once written whole: the next write appends.
    var files: [GrowingPlaylistFile?] = []

    /// What the aligned prefix depends on besides the durations of segments already planned.
    struct PrefixInputs: Equatable {
        var ready: [Int]
        var planned: [Int]
        var ended: [Bool]
    }
}

/// What a growing playlist file holds, so that the next write appends the segments that became
/// ready rather than write every segment again: an EVENT playlist only grows, and a day's live
/// recording rewritten whole once a second composed its every segment each time.
///
/// The file is always the composition of the rendition's first ``segmentCount`` segments, the
/// last of them written as an entry. A tail composed from that segment on (its keys and map in
/// effect, so that only changes are written, and numbered on from the file's entries) gives the
/// lines to append after its first entry. When the tail needs a higher version or target
/// duration than the file states, the file is written whole again.
struct GrowingPlaylistFile: Hashable, Sendable {
    /// Segments of the rendition composed into it.
    var segmentCount: Int
    /// Entries it lists (segments left out are not).
    var entryCount: Int
    /// The media sequence number of its first entry.
    var firstSequence: UInt64
    /// The version and target duration it states.
    var version: Int
    var targetDuration: Int

    /// The file a whole write of the first `segmentCount` segments made, as `playlist`; `nil`
    /// when it lists no entry (nothing to append after).
    init?(segmentCount: Int, playlist: MediaPlaylist) {
        guard !playlist.segments.isEmpty else { return nil }
        self.segmentCount = segmentCount
        entryCount = playlist.segments.count
        firstSequence = playlist.mediaSequence
        version = playlist.version ?? 3
        targetDuration = playlist.targetDuration ?? 0
    }

    /// The segments to compose for a head of `count` segments: from `file`'s last segment when
    /// there is a file to append to, else from the first; up to the last entry of the head, so
    /// that segments left out at its end go with the entries after them (a head with no entry at
    /// all is composed whole). `nil` when `file` already lists every entry of the head.
    ///
    /// - Parameter leftOut: Whether the playlist leaves the segment at a position out.
    static func range(
        appendingTo file: GrowingPlaylistFile?, head count: Int, leftOut: (Int) -> Bool
    ) -> Range<Int>? {
        let from = file.map { $0.segmentCount - 1 } ?? 0
        guard let last = (from..<count).last(where: { !leftOut($0) }) else {
            return file == nil ? 0..<count : nil
        }
        if let file, last < file.segmentCount { return nil }
        return from..<(last + 1)
    }

    /// The media sequence number of the last entry: the tail's first.
    var lastSequence: UInt64 { firstSequence &+ UInt64(entryCount - 1) }

    /// The file once `tail` (composed from the file's last segment to `segmentCount`) is
    /// appended, and the entries to append; `nil` when the tail cannot be appended.
    func appending(_ tail: MediaPlaylist, upTo segmentCount: Int) -> (file: Self, entries: ArraySlice<MediaSegment>)? {
        guard segmentCount > self.segmentCount, tail.segments.count >= 2, tail.version ?? 3 <= version,
            tail.targetDuration ?? 0 <= targetDuration
        else { return nil }
        var file = self
        file.segmentCount = segmentCount
        file.entryCount += tail.segments.count - 1
        return (file, tail.segments.dropFirst())
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
    /// once every segment is ready: the final VOD playlists come next. A media playlist written
    /// whole once is appended to after (``GrowingPlaylistFile``). A failed write is tried again
    /// at the next call, whole; the download does not depend on it.
    func publishGrowingPlaylists() {
        let start = ContinuousClock.now
        let gapForm: PlaylistComposer.GapForm = options.gapTags ? .tagged : .omitted
        let due = state.withLock { state -> (PlayablePrefix, [Composition], MultivariantPlaylist?)? in
            let prefix = advancePrefix(in: &state)
            let planned = state.renditions.map(\.segments.count)
            let complete = zip(prefix.counts, planned).allSatisfy { $0 == $1 } && state.renditions.allSatisfy(\.ended)
            guard !complete,
                state.growing.gate.isDue(prefix, playable: prefix.isPlayable(segmentCounts: planned), at: start)
            else { return nil }
            if state.growing.files.count != state.renditions.count {
                state.growing.files = Array(repeating: nil, count: state.renditions.count)
            }
            let compositions = state.renditions.indices.compactMap { index in
                composition(of: index, upTo: prefix.counts[index], gaps: gapForm, in: state)
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
        do {
            // Media playlists first: a player that finds index.m3u8 finds what it lists.
            for composition in compositions {
                try write(composition, gaps: gapForm)
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
        var rendition: Int
        var folder: String
        /// The rendition's segments, read in place: a live recording's append meanwhile copies
        /// only the chunk it writes to (``ChunkedArray``), not every segment.
        var segments: ChunkedArray<RecordedSegment>
        /// The segments to compose: from the file's last segment when appending, else from the first.
        var range: Range<Int>
        /// Positions in `range` given up so far (`--skip-broken`): written as gaps.
        var gaps: Set<Int>
        var header: MediaPlaylistHeader
        var targetDuration: Int
        /// The file to append to, if any.
        var file: GrowingPlaylistFile?
    }

    /// What rendition `index`'s playlist needs written for a head of `count` segments: `nil`
    /// when its file already lists every entry of it. The head is cut after its last entry, so
    /// that segments left out at its end go with the entries after them.
    private func composition(
        of index: Int, upTo count: Int, gaps gapForm: PlaylistComposer.GapForm, in state: EngineState
    ) -> Composition? {
        let rendition = state.renditions[index]
        // A file whose last entry would now be left out cannot be appended to (never expected:
        // a segment's file, once in place or given up, stays so).
        let file = state.growing.files[index].flatMap { file -> GrowingPlaylistFile? in
            guard file.segmentCount <= count else { return nil }
            let last = rendition.segments[file.segmentCount - 1]
            let gap = readiness(of: last, rendition: index, in: state) == .gap
            return PlaylistComposer.leavesOut(last, skipped: last.skipped || gap, gaps: gapForm) ? nil : file
        }
        let gaps = givenUp(in: (file.map { $0.segmentCount - 1 } ?? 0)..<count, rendition: index, in: state)
        let range = GrowingPlaylistFile.range(appendingTo: file, head: count) { position in
            let segment = rendition.segments[position]
            return PlaylistComposer.leavesOut(
                segment, skipped: segment.skipped || gaps.contains(position), gaps: gapForm)
        }
        guard let range else { return nil }
        let longest = rendition.segments.reduce(0.0) { max($0, $1.segment.duration) }
        return Composition(
            rendition: index, folder: rendition.selected.folder, segments: rendition.segments, range: range,
            gaps: gaps.filter { range.contains($0) }, header: rendition.header,
            targetDuration: longest.isFinite ? Int(saturating: longest.rounded()) : 0, file: file)
    }

    /// The positions in `range` of segments whose files were given up.
    private func givenUp(in range: Range<Int>, rendition index: Int, in state: EngineState) -> Set<Int> {
        let segments = state.renditions[index].segments
        return Set(range.filter { readiness(of: segments[$0], rendition: index, in: state) == .gap })
    }

    /// Appends the new entries of `composition` to its file, or writes the file whole.
    private func write(_ composition: Composition, gaps gapForm: PlaylistComposer.GapForm) throws {
        let path = path(composition.folder + "/" + PackageLayout.mediaPlaylistName)
        let ending = PlaylistComposer.Ending.growing(targetDuration: composition.targetDuration)
        let index = composition.rendition
        if let file = composition.file {
            let tail = PlaylistComposer.compose(
                composition.segments[composition.range], alsoSkipped: composition.gaps, header: composition.header,
                target: .local, gaps: gapForm, ending: ending, firstSequence: file.lastSequence)
            if let (appended, entries) = file.appending(tail, upTo: composition.range.upperBound) {
                // Forgotten first: a failed append leaves the file to be written whole next time.
                state.withLock { $0.growing.files[index] = nil }
                try PackageStore.append(Array(MediaPlaylist.serializedSegments(entries).utf8), to: path)
                state.withLock { $0.growing.files[index] = appended }
                return
            }
        }
        let whole = 0..<composition.range.upperBound
        let gaps =
            composition.range.lowerBound == 0
            ? composition.gaps : state.withLock { givenUp(in: whole, rendition: index, in: $0) }
        let playlist = PlaylistComposer.compose(
            composition.segments[whole], alsoSkipped: gaps, header: composition.header, target: .local,
            gaps: gapForm, ending: ending)
        state.withLock { $0.growing.files[index] = nil }
        try PackageStore.writeAtomically(playlist, to: URL(fileURLWithPath: path))
        let file = GrowingPlaylistFile(segmentCount: whole.upperBound, playlist: playlist)
        state.withLock { $0.growing.files[index] = file }
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
            guard let fileIndex = state.books.fileIndex(path) else { continue }
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
            guard let uri = key.uri, let fileIndex = state.books.fileIndex(folder + "/" + uri) else { continue }
            if !state.books.states[fileIndex].isDone { return .pending }
        }
        return result
    }
}
