import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

extension HLSDownloadEngine {
    /// Writes every rendition's final VOD playlist (over the growing one written while the
    /// transfer ran), then `index.m3u8`, then the manifest, whose status says the package is
    /// complete.
    func finish() throws(HLSDownloadError) -> HLSDownloadResult {
        let live = state.withLock { $0.live }
        if live { try trimRecording() }
        let (playlists, master, gaps, status) = state.withLock { state in
            var gaps: [HLSDownloadGap] = []
            for (index, fileState) in state.books.states.enumerated() {
                if case .skipped(let reason, let status) = fileState {
                    let file = state.books.files[index]
                    gaps.append(HLSDownloadGap(path: file.path, url: file.url, reason: reason, status: status))
                }
            }
            // Each rendition's segments as they stand (shared with the state, not copied): the
            // playlists are composed from them after the lock is released.
            var playlists: [(folder: String, segments: ChunkedArray<RecordedSegment>, header: MediaPlaylistHeader)] = []
            for index in state.renditions.indices {
                markSkipped(rendition: index, in: &state)
                let rendition = state.renditions[index]
                playlists.append((rendition.selected.folder, rendition.segments, rendition.header))
            }
            let master = MasterComposer.compose(
                master: state.master, masterURL: state.masterURL, variant: state.variant,
                renditions: state.renditions.map(\.selected), measured: measuredBandwidth(in: state))
            let skippedSegments = state.renditions.contains { $0.segments.contains(where: \.skipped) }
            return (
                playlists, master, gaps, skippedSegments || !gaps.isEmpty ? PackageStatus.completeWithGaps : .complete
            )
        }
        let gapForm: PlaylistComposer.GapForm = options.gapTags ? .tagged : .omitted
        var namedKeys: Set<String> = []
        for (folder, segments, header) in playlists {
            // Composed twice, its entries never held: once for the header, once as it is written.
            func compose(_ each: (MediaSegment) -> Void) -> MediaPlaylist {
                PlaylistComposer.frame(segments, header: header, target: .local, gaps: gapForm, each: each)
            }
            try PackageStore.writeAtomically(
                compose { _ in },
                segments: { each in
                    _ = compose { segment in
                        for key in segment.keys { if let uri = key.uri { namedKeys.insert(folder + "/" + uri) } }
                        each(segment)
                    }
                },
                to: URL(fileURLWithPath: path(folder + "/" + PackageLayout.mediaPlaylistName)))
        }
        try writeDASHIndexes()
        try writePackageMPD()
        try PackageStore.writeAtomically(
            Data(master.serialized().utf8), to: URL(fileURLWithPath: path(PackageLayout.indexName)))
        if options.decrypt { removeDecryptionKeys(named: namedKeys) }
        try saveManifest(status: status, error: nil)
        emitProgress()
        return state.withLock { state in
            HLSDownloadResult(
                id: job.packageID, directory: directory,
                indexFile: directory.appendingPathComponent(PackageLayout.indexName), status: status, gaps: gaps,
                files: state.books.files.count, filesFetched: state.books.filesFetched, bytes: state.books.bytesInPlace,
                bytesTransferred: state.books.bytesTransferred,
                duration: state.renditions.first?.segments.reduce(0) {
                    $0 + ($1.excluded == nil ? $1.segment.duration : 0)
                } ?? 0, live: state.live,
                mpdFile: state.dash == nil ? nil : directory.appendingPathComponent(PackageLayout.mpdName)
            )
        }
    }

    /// With `--decrypt`, the keys that only served to decrypt leave the package once its playlists
    /// are written: removed from disk (a package is served as it is on disk) and from the manifest.
    /// A key a playlist still names (a segment left encrypted, such as SAMPLE-AES) stays. A later
    /// run that needs one again (a gap to fetch) finds it pending and fetches it.
    private func removeDecryptionKeys(named: Set<String>) {
        let removed = state.withLock { state -> Set<String> in
            let decrypting = Set(state.books.files.compactMap { $0.decryption?.keyPath })
            let removed = decrypting.subtracting(named)
            state.removedKeys.formUnion(removed)
            return removed
        }
        for key in removed.sorted() { PackageFiles.remove(path(key)) }
    }

    /// Sets ``RecordedSegment/skipped`` from the state of the files each segment needs: any not
    /// in place makes it a gap.
    private func markSkipped(rendition index: Int, in state: inout EngineState) {
        for segmentIndex in state.renditions[index].segments.indices {
            let segment = state.renditions[index].segments[segmentIndex]
            state.renditions[index].segments[segmentIndex].skipped =
                readiness(of: segment, rendition: index, in: state) != .ready
        }
    }

    /// A live recording stops at the first segment not in place in each rendition (transfers cut
    /// short by the end of the recording); files only those segments used are removed.
    private func trimRecording() throws(HLSDownloadError) {
        let removed: [String] = state.withLock { state in
            var kept: Set<String> = []
            for index in state.renditions.indices {
                let segments = state.renditions[index].segments
                var end = segments.count
                for (position, segment) in segments.enumerated() {
                    let ready = [segment.file, segment.mapFile].compactMap { $0 }.allSatisfy { path in
                        guard let fileIndex = state.books.fileIndex(path) else { return true }
                        switch state.books.states[fileIndex] {
                        case .done: return true
                        case .skipped: return options.skipBroken
                        case .pending: return false
                        }
                    }
                    if !ready {
                        end = position
                        break
                    }
                }
                state.renditions[index].segments.truncate(to: end)
                state.renditions[index].recordedDuration = state.renditions[index].segments.reduce(0) {
                    $0 + $1.segment.duration
                }
                state.renditions[index].ended = true
                for segment in state.renditions[index].segments {
                    if let file = segment.file { kept.insert(file) }
                    if let map = segment.mapFile { kept.insert(map) }
                }
            }
            return state.books.recordingTrimmed(keeping: kept)
        }
        for file in removed {
            let full = path(file)
            for suffix in [
                "", PackageLayout.encryptedSuffix, PackageLayout.rangedPartialSuffix,
                PackageLayout.rangesRecordSuffix, ".streamkit-partial", ".streamkit-resume",
                PackageLayout.encryptedSuffix + ".streamkit-partial",
                PackageLayout.encryptedSuffix + ".streamkit-resume",
            ] {
                PackageFiles.remove(full + suffix)
            }
        }
        for index in state.withLock({ $0.renditions.indices }) { try saveSource(of: index) }
    }

    /// Bits a second of the main rendition's segments: the peak over segments, and the average.
    func measuredBandwidth(in state: EngineState) -> MasterComposer.MeasuredBandwidth? {
        guard let main = state.renditions.first else { return nil }
        var peak = 0.0
        var bytes = 0.0
        var seconds = 0.0
        for segment in main.segments where !segment.skipped {
            let size: Int64
            if let range = segment.local.range {
                size = range.count
            } else if let file = segment.file, let index = state.books.fileIndex(file),
                case .done(let length, _) = state.books.states[index]
            {
                size = length
            } else {
                continue
            }
            let duration = segment.segment.duration
            bytes += Double(size)
            seconds += duration
            if duration > 0 { peak = max(peak, Double(size) * 8 / duration) }
        }
        guard seconds > 0 else { return nil }
        return MasterComposer.MeasuredBandwidth(
            peak: Int(saturating: peak.rounded(.up)), average: Int(saturating: (bytes * 8 / seconds).rounded(.up)))
    }

    // MARK: Progress

    /// Emits progress and saves the manifest at checkpoints until cancelled.
    func tick() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: options.progressInterval)
            if Task.isCancelled { break }
            let actions = state.withLock { $0.books.progressTick(at: .now) }
            try? perform(actions)
            publishGrowingPlaylists()
        }
    }

    /// Emits the current progress.
    func emitProgress() {
        events.yield(.progress(progressSnapshot()))
    }

    func progressSnapshot() -> HLSDownloadProgress {
        let limit = liveLimit
        return state.withLock { state in
            state.books.progress(
                at: .now, live: state.live, recordedSeconds: state.renditions.first?.recordedDuration,
                limitSeconds: limit)
        }
    }
}
