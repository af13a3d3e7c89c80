import Foundation
import StreamKitCore
import Synchronization

/// Where the journal of checkpoints stands: the number its lines carry (the `package.json` they
/// continue states it), and the bytes of that `package.json` and of the lines since.
struct CheckpointJournal: Hashable, Sendable {
    var number: Int
    var manifestBytes: Int
    var journalBytes = 0

    /// Whether the next checkpoint writes `package.json` whole: once the lines since it add up
    /// to its size, so that every checkpoint together writes at most about twice what the
    /// whole files written come to, and those grow geometrically.
    var isFull: Bool { journalBytes >= manifestBytes }
}

// State on disk: package.json, written whole or continued by a line of the journal.
extension HLSDownloadEngine {
    /// The manifest as of now, its file records made as they are written. The state is taken
    /// under the lock (its arrays of files and states are shared with the engine's until either
    /// changes a chunk); the records, and the lengths of gaps in byte-range files read from disk,
    /// are made after it is released.
    func manifest(status: PackageStatus, error: String?) -> StreamedFileRecords<PackageManifest> {
        let state = state.withLock { state in
            state.books.manifestTaken(listingChanges: false)
            return state
        }
        let manifest = PackageManifest(
            id: job.packageID, source: job.source, title: job.title, masterURL: state.masterURL,
            selection: job.selection,
            decrypt: options.decrypt, live: state.live, status: status, error: error, created: state.created,
            updated: PackageStore.timestamp(), master: state.master, variant: state.variant,
            renditions: renditionRecords(in: state), files: [],
            sourceKind: state.dash == nil ? nil : PackageManifest.dashKind)
        return StreamedFileRecords(
            document: manifest,
            records: .init { emit in
                for index in state.books.files.indices {
                    if let record = self.fileRecord(index, in: state) { try emit(record) }
                }
            })
    }

    /// What package.json records of file `index`; `nil` for a key removed after decryption.
    private func fileRecord(_ index: Int, in state: EngineState) -> PackageManifest.File? {
        let file = state.books.files[index]
        guard !state.removedKeys.contains(file.path) else { return nil }
        var record = PackageManifest.File(
            path: file.path, kind: file.kind.rawValue, url: file.url,
            ranges: file.parts.map { ByteRangeSet($0).ranges.map { [$0.lowerBound, $0.upperBound] } },
            state: "pending")
        switch state.books.states[index] {
        case .pending:
            break
        case .done(let length, let etag):
            record.state = "done"
            record.length = length
            record.etag = etag
        case .skipped(let reason, _):
            record.state = "gap"
            record.error = reason
            if file.parts != nil, !file.rebased, let length = PackageFiles.size(path(file.path)) {
                record.length = length
            }
        }
        return record
    }

    private func renditionRecords(in state: EngineState) -> [PackageManifest.Rendition] {
        state.renditions.map { rendition in
            PackageManifest.Rendition(
                folder: rendition.selected.folder, role: rendition.selected.role.rawValue,
                playlistURL: rendition.selected.playlistURL, groupID: rendition.selected.groupID,
                name: rendition.selected.name, language: rendition.selected.language,
                bandwidth: rendition.selected.bandwidth, segments: rendition.segments.count,
                duration: rendition.recordedDuration, ended: rendition.ended,
                lastSourceSequence: rendition.lastSourceSequence)
        }
    }

    /// Writes package.json whole, and empties the journal: lines written before are void.
    ///
    /// - Parameter continued: Whether checkpoints of this run follow, as lines of the journal
    ///   (the file is given a new ``PackageManifest/journal`` number); otherwise the download
    ///   stopped and the file stands alone.
    func saveManifest(status: PackageStatus, error: String?, continued: Bool = false) throws(HLSDownloadError) {
        var manifest = manifest(status: status, error: error)
        // A number of its own: a journal line that a kill left over from another write of the
        // file cannot carry it.
        manifest.document.journal = continued ? Int.random(in: 1...Int(Int32.max)) : nil
        state.withLock { $0.journal = nil }
        try PackageStore.save(manifest, in: directory)
        PackageFiles.remove(PackageStore.journalURL(in: directory).path)
        guard let number = manifest.document.journal,
            let bytes = PackageFiles.size(PackageStore.manifestURL(in: directory).path)
        else { return }
        state.withLock { $0.journal = CheckpointJournal(number: number, manifestBytes: Int(bytes)) }
    }

    /// A checkpoint while the download runs: a line of the journal with what changed since the
    /// last one, or package.json whole when the journal is as long as it (or there is none).
    func checkpoint(status: PackageStatus) throws(HLSDownloadError) {
        let (snapshot, changed) = state.withLock { state in (state, state.books.manifestTaken()) }
        guard let journal = snapshot.journal, !journal.isFull, let changed else {
            try saveManifest(status: status, error: nil, continued: true)
            return
        }
        let update = StreamedFileRecords(
            document: PackageManifestUpdate(
                journal: journal.number, status: status, updated: PackageStore.timestamp(),
                renditions: renditionRecords(in: snapshot), files: []),
            records: .init { emit in
                for index in changed {
                    if let record = self.fileRecord(index, in: snapshot) { try emit(record) }
                }
            })
        // The line goes to the journal in chunks as it is encoded: a checkpoint after a burst of
        // completed files records thousands of them.
        var lineBytes = 0
        do {
            try PackageStore.append(to: PackageStore.journalURL(in: directory).path, creating: true) { emit in
                try JSONWriter.encode(update, chunkSize: 64 << 10) { chunk in
                    lineBytes += chunk.count
                    emit(chunk)
                }
                emit([0x0A])
                lineBytes += 1
            }
        } catch {
            // What this line held is recorded by the next checkpoint, whole.
            state.withLock { state in
                state.journal = nil
                state.books.planChanged()
            }
            throw error
        }
        state.withLock { $0.journal?.journalBytes += lineBytes }
    }
}
