import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// Where a planned file stands.
enum FileState: Sendable, Hashable {
    case pending
    case done(length: Int64, etag: String?)
    case skipped(reason: String, status: HTTPStatus?)

    var isDone: Bool {
        if case .done = self { return true }
        return false
    }
}

/// A byte-range file's progress: which bytes are on disk, which failed, and the validator.
struct RangedFileState: Sendable, Hashable {
    var done = ByteRangeSet()
    var failed = ByteRangeSet()
    var validator: HTTPClientRequest.IfRange?
    var piecesLeft = 0
}

/// Where an HLS download stands, file by file: what is done, in flight, skipped or pending, the
/// byte-range progress, the counters progress is made of, and when a checkpoint of package.json is
/// due. No I/O: each transition is a mutating method returning what the engine does next
/// (``HLSDownloadAction``), taken under the engine's lock and performed after it is released.
struct HLSDownloadBookkeeping: Sendable {
    /// Transfers at once: byte-range files are cut into at most as many pieces.
    let connections: Int
    /// The least bytes of a byte-range piece when cutting a long run for several connections.
    let minimumPieceBytes: Int64

    private(set) var files = ChunkedArray<PlannedFile>()
    private var paths = FilePathIndex()
    private(set) var states = ChunkedArray<FileState>()
    private(set) var ranged: [Int: RangedFileState] = [:]

    private(set) var unitsTotal = 0
    private(set) var unitsDone = 0
    private(set) var unitsSkipped = 0
    private(set) var bytesDone: Int64 = 0
    private(set) var bytesTransferred: Int64 = 0
    /// Bytes of whole-file downloads in flight already counted in `bytesDone`, and received this run.
    private var inFlight: [Int: (counted: Int64, transferred: Int64)] = [:]
    private(set) var estimator = SizeEstimator(renditions: [])
    private var meter = TransferSpeedMeter()
    private(set) var filesFetched = 0
    private(set) var filesAlreadyDone = 0

    /// Something package.json records changed since it was last written.
    private(set) var manifestDirty = true
    /// The files before ``plannedSince`` whose state changed since package.json's state was last
    /// taken; `nil` when the files were renumbered (a recording trimmed), so that only a whole
    /// package.json can record them.
    private var changedFiles: Set<Int>? = []
    /// The count of files when package.json's state was last taken: every file from this index
    /// on is new since (a set of a long playlist's every index took 30 bytes a file).
    private var plannedSince = 0
    /// When the last checkpoint was written, and how long it took.
    private var lastCheckpoint: ContinuousClock.Instant?
    private var checkpointCost = Duration.zero
    /// The transfer has ended: the final package.json is written by the caller, never a checkpoint after it.
    private(set) var transferEnded = false

    init(connections: Int, minimumPieceBytes: Int64) {
        self.connections = connections
        self.minimumPieceBytes = minimumPieceBytes
    }

    /// The index of the file at `path`, if one is planned.
    func fileIndex(_ path: String) -> Int? { paths.index(of: path, in: files) }

    // MARK: Planning

    /// A rendition was added to the plan; its bytes a second are assumed to be `priorBytesPerSecond`
    /// until a segment is done.
    mutating func renditionPlanned(priorBytesPerSecond: Double?) {
        estimator.renditions.append(SizeEstimator.Rendition(priorBytesPerSecond: priorBytesPerSecond))
    }

    /// Files were planned: new ones are added as pending.
    ///
    /// - Returns: Their indices (an existing file's for a path already planned).
    @discardableResult
    mutating func filesPlanned(_ newFiles: some Sequence<PlannedFile>) -> [Int] {
        var indices: [Int] = []
        indices.reserveCapacity(newFiles.underestimatedCount)
        for file in newFiles {
            if let existing = paths.index(of: file.path, in: files) {
                indices.append(existing)
                continue
            }
            indices.append(files.count)
            files.append(file)
            paths.insert(files.count - 1, in: files)
            states.append(.pending)
            counted(newFile: file, at: files.count - 1)
        }
        return indices
    }

    /// The files of a planning were planned. When no file was planned before and no path comes
    /// twice, the bookkeeping takes the planning's chunks as they are: a copy of a long
    /// playlist's files beside them would double what it holds while it is planned.
    mutating func filesPlanned(taking newFiles: ChunkedArray<PlannedFile>) {
        guard files.isEmpty else {
            filesPlanned(newFiles)
            return
        }
        paths.reserveCapacity(newFiles.count, in: newFiles)
        for (index, file) in newFiles.enumerated() {
            guard paths.index(of: file.path, in: newFiles) == nil else {
                // A path twice: added one at a time, the later file taking the first one's index.
                paths = FilePathIndex()
                filesPlanned(newFiles)
                return
            }
            paths.insert(index, in: newFiles)
        }
        files = newFiles
        for (index, file) in newFiles.enumerated() {
            states.append(.pending)
            counted(newFile: file, at: index)
        }
    }

    private mutating func counted(newFile file: PlannedFile, at index: Int) {
        unitsTotal += file.units
        if file.kind == .segment {
            estimator.renditions[file.rendition].totalDuration += file.duration
        }
    }

    /// The plan changed (segments added, a rendition ended): the next checkpoint records it.
    mutating func planChanged() {
        manifestDirty = true
    }

    /// What an earlier run left of a file was found on disk: done, or a byte-range file with
    /// ranges in place.
    mutating func fileRestored(_ index: Int, _ fileState: FileState, _ rangedState: RangedFileState?) {
        let file = files[index]
        setState(index, fileState)
        if case .done(let length, _) = fileState {
            unitsDone += file.units
            bytesDone += length
            filesAlreadyDone += 1
            count(doneFile: index, length: length)
        } else if var rangedState {
            var left = 0
            for piece in pieces(of: file) {
                if rangedState.done.contains(piece.range) {
                    unitsDone += piece.units
                } else {
                    left += 1
                }
            }
            rangedState.piecesLeft = left
            ranged[index] = rangedState
            bytesDone += rangedState.done.byteCount
            if file.kind == .segment {
                estimator.renditions[file.rendition].exactBytes += file.rangedLength ?? 0
                estimator.renditions[file.rendition].exactDuration += file.duration
            }
        }
    }

    /// The transfer starts at `now`: byte-range files whose every piece arrived in an earlier run
    /// are moved into place, the pending items are queued, and unless a live recording adds more,
    /// the queue is finished.
    mutating func transferStarted(recording: Bool, at now: ContinuousClock.Instant) -> [HLSDownloadAction] {
        lastCheckpoint = now
        let finished = ranged.filter { index, ranged in ranged.piecesLeft <= 0 && !states[index].isDone }.map(\.key)
        var actions = finished.sorted().map { HLSDownloadAction.completeRangedFile($0, failure: nil) }
        actions.append(.enqueue(pendingItems(files: files.indices)))
        if !recording { actions.append(.finishQueue) }
        return actions
    }

    /// A live recording stopped: only the files of `kept` (and keys) stay in the plan.
    ///
    /// - Returns: The package paths of the files dropped.
    mutating func recordingTrimmed(keeping kept: Set<String>) -> [String] {
        var removed: [String] = []
        var keptFiles = ChunkedArray<PlannedFile>()
        var keptStates = ChunkedArray<FileState>()
        for (index, file) in files.enumerated() {
            if file.kind == .key || kept.contains(file.path) {
                keptFiles.append(file)
                keptStates.append(states[index])
            } else {
                removed.append(file.path)
            }
        }
        files = keptFiles
        states = keptStates
        changedFiles = nil
        plannedSince = 0
        paths = FilePathIndex()
        paths.reserveCapacity(keptFiles.count, in: keptFiles)
        for index in keptFiles.indices { paths.insert(index, in: keptFiles) }
        ranged = [:]
        return removed
    }

    // MARK: Transfers

    /// A whole-file download reported `received` bytes in its file and `transferred` received this run.
    mutating func wholeFileProgressed(_ index: Int, received: Int64, transferred: Int64) {
        let previous = inFlight[index] ?? (0, 0)
        bytesDone += received - previous.counted
        bytesTransferred += transferred - previous.transferred
        inFlight[index] = (received, transferred)
    }

    /// A whole-file download ended with `byteCount` bytes in its file, `transferred` received this run.
    mutating func wholeFileTransferred(_ index: Int, byteCount: Int64, transferred: Int64) {
        let counted = inFlight[index]?.transferred ?? 0
        bytesTransferred += transferred - counted
        inFlight[index]?.transferred = transferred
        bytesDone += byteCount - (inFlight[index]?.counted ?? 0)
        inFlight[index]?.counted = byteCount
    }

    /// A whole file is in place under its final name, `length` bytes long.
    mutating func fileFinished(_ index: Int, length: Int64, etag: String?) {
        let file = files[index]
        if file.parts == nil {
            unitsDone += file.units
            // Bytes were counted as they came; a decrypted file is a little shorter.
            inFlight[index] = nil
        }
        setState(index, .done(length: length, etag: etag))
        filesFetched += 1
        count(doneFile: index, length: length)
        manifestDirty = true
    }

    /// A key file of 16 bytes was fetched and written.
    mutating func keyFetched(_ index: Int) {
        guard !states[index].isDone else { return }
        setState(index, .done(length: 16, etag: nil))
        unitsDone += files[index].units
        bytesDone += 16
        bytesTransferred += 16
        filesFetched += 1
        count(doneFile: index, length: 16)
        manifestDirty = true
    }

    /// The bytes of `range` were written to a byte-range file's partial data; the server's first
    /// validator is kept for the next requests.
    ///
    /// - Returns: The ranges record to save when `recordDue`.
    mutating func rangeWritten(
        _ range: ByteRange, file index: Int, validator: HTTPClientRequest.IfRange?, recordDue: Bool
    ) -> RangesRecord? {
        ranged[index, default: RangedFileState()].done.insert(range)
        if ranged[index]?.validator == nil { ranged[index]?.validator = validator }
        bytesDone += range.count
        bytesTransferred += range.count
        return recordDue ? rangesRecord(of: index) : nil
    }

    /// A byte-range request ended with `validator` from the server.
    mutating func rangeValidatorReceived(_ validator: HTTPClientRequest.IfRange?, file index: Int) {
        if ranged[index]?.validator == nil { ranged[index]?.validator = validator }
    }

    /// `range` of a byte-range file failed after retries (`--skip-broken`, fetched range by range):
    /// its segment becomes a gap when the piece ends.
    mutating func rangeFailed(_ range: ByteRange, file index: Int, error: HLSDownloadError) -> [HLSDownloadAction] {
        ranged[index]?.failed.insert(range)
        return [.reportSkipped(path: files[index].path, url: files[index].url, bytes: range, error: error)]
    }

    /// A piece of a byte-range file ended, with `unitsDone` segments and maps in place and
    /// `unitsSkipped` lost; the last piece completes the file.
    mutating func pieceEnded(_ index: Int, unitsDone done: Int, unitsSkipped skipped: Int) -> [HLSDownloadAction] {
        unitsDone += done
        unitsSkipped += skipped
        ranged[index]?.piecesLeft -= 1
        manifestDirty = true
        return (ranged[index]?.piecesLeft ?? 0) <= 0 ? [.completeRangedFile(index, failure: nil)] : []
    }

    /// A work item failed after retries. With `skipBroken` (not for a key, a cancellation or a
    /// write failure) its file, or the piece's ranges, become a gap; otherwise the download fails.
    mutating func itemFailed(_ item: WorkItem, error: HLSDownloadError, skipBroken: Bool) -> [HLSDownloadAction] {
        let file = files[item.file]
        guard error.kind != .cancelled, skipBroken, error.kind != .writeFailed, file.kind != .key else {
            return [.fail(error)]
        }
        var actions: [HLSDownloadAction] = [.reportSkipped(path: file.path, url: file.url, bytes: nil, error: error)]
        switch item {
        case .whole(let index):
            setState(index, .skipped(reason: error.description, status: error.status))
            unitsSkipped += file.units
            if let counted = inFlight[index]?.counted { bytesDone -= counted }
            inFlight[index] = nil
            manifestDirty = true
        case .piece(let index, let range, let units):
            ranged[index]?.failed.insert(range)
            ranged[index]?.piecesLeft -= 1
            unitsSkipped += units
            manifestDirty = true
            if (ranged[index]?.piecesLeft ?? 0) <= 0 { actions.append(.completeRangedFile(index, failure: error)) }
        }
        return actions
    }

    /// A byte-range file ended without being moved into place (every range failed, or ranges
    /// failed of a segment to decrypt): a gap for `reason`.
    mutating func rangedFileBecameGap(_ index: Int, reason: String, status: HTTPStatus?) {
        setState(index, .skipped(reason: reason, status: status))
        manifestDirty = true
    }

    /// A byte-range file was moved into place, `length` bytes long: done when no range failed,
    /// otherwise a gap for `gapReason`.
    mutating func rangedFilePlaced(
        _ index: Int, length: Int64, etag: String?, gapReason: String, status: HTTPStatus?
    ) {
        let file = files[index]
        let failed = ranged[index]?.failed ?? ByteRangeSet()
        if failed.isEmpty {
            setState(index, .done(length: length, etag: etag))
        } else {
            setState(index, .skipped(reason: gapReason, status: status))
        }
        filesFetched += 1
        if file.kind == .segment {
            estimator.renditions[file.rendition].exactBytes -= file.rangedLength ?? 0
            estimator.renditions[file.rendition].exactDuration -= file.duration
            estimator.renditions[file.rendition].doneBytes += length
            estimator.renditions[file.rendition].doneDuration += file.duration
        }
        manifestDirty = true
    }

    // MARK: Progress and checkpoints

    /// The progress timer fired at `now`: progress is reported, and package.json is written when
    /// something changed, a second has passed since the last checkpoint, and at least ten times as
    /// long as that checkpoint took (a slow disk is not kept busy). None once the transfer ended.
    mutating func progressTick(at now: ContinuousClock.Instant) -> [HLSDownloadAction] {
        guard !transferEnded else { return [.reportProgress] }
        let last = lastCheckpoint ?? now
        if manifestDirty, last.duration(to: now) >= max(.seconds(1), checkpointCost * 10) {
            return [.reportProgress, .writeCheckpoint]
        }
        return [.reportProgress]
    }

    /// The state package.json records was taken for writing: it is no longer dirty.
    ///
    /// - Parameter listingChanges: Whether the caller records only what changed (a line of the
    ///   journal), rather than the whole state.
    /// - Returns: When `listingChanges`, the files planned or changed since it was last taken, in
    ///   order; `nil` when only a whole package.json can record what changed, or when not asked.
    @discardableResult
    mutating func manifestTaken(listingChanges: Bool = true) -> [Int]? {
        manifestDirty = false
        defer {
            changedFiles = []
            plannedSince = files.count
        }
        guard listingChanges, let changedFiles else { return nil }
        return changedFiles.sorted() + Array(plannedSince..<files.count)
    }

    /// Sets a file's state, and notes the file for the next checkpoint.
    private mutating func setState(_ index: Int, _ state: FileState) {
        states[index] = state
        if index < plannedSince { changedFiles?.insert(index) }
    }

    /// A checkpoint due at `start` was written by `end`.
    mutating func checkpointWritten(dueAt start: ContinuousClock.Instant, writtenAt end: ContinuousClock.Instant) {
        lastCheckpoint = end
        checkpointCost = start.duration(to: end)
    }

    /// The workers stopped (all done, failed or cancelled): the final package.json comes next.
    mutating func transferStopped() {
        transferEnded = true
    }

    /// The progress as of `now` (which feeds the speed meter).
    mutating func progress(
        at now: ContinuousClock.Instant, live: Bool, recordedSeconds: Double?, limitSeconds: Double?
    ) -> HLSDownloadProgress {
        meter.record(totalBytes: bytesTransferred, at: now)
        return HLSDownloadProgress(
            filesDone: unitsDone, filesTotal: unitsTotal, filesSkipped: unitsSkipped, bytesDone: bytesDone,
            bytesTransferred: bytesTransferred,
            estimatedTotalBytes: live ? nil : estimator.estimate().map { max($0, bytesDone) },
            bytesPerSecond: meter.bytesPerSecond, recordedSeconds: live ? recordedSeconds : nil,
            recordingLimitSeconds: live ? limitSeconds : nil)
    }

    // MARK: Queries

    /// The pieces a file is fetched in.
    func pieces(of file: PlannedFile) -> [(range: ByteRange, units: Int)] {
        guard let parts = file.parts else { return [] }
        if file.rebased { return parts.map { ($0, 1) } }
        return RangePiecePlanner.pieces(parts: parts, connections: connections, minimumPieceBytes: minimumPieceBytes)
    }

    /// The work items for `indices` that are not done yet, in media-time order across renditions.
    func pendingItems(files indices: some Collection<Int>) -> [WorkItem] {
        // Held beside each other rather than as tuples sorted with their positions: a long
        // playlist's items were held four times over, at 56 to 64 bytes each, when the transfer began.
        var items: [WorkItem] = []
        var keys: [(time: Double, rendition: Int)] = []
        items.reserveCapacity(indices.count)
        keys.reserveCapacity(indices.count)
        for index in indices where !states[index].isDone {
            let file = files[index]
            if file.kind == .key { continue }
            if file.parts == nil {
                items.append(.whole(file: index))
                keys.append((file.startTime, file.rendition))
                continue
            }
            let done = ranged[index]?.done ?? ByteRangeSet()
            for piece in pieces(of: file) where !done.contains(piece.range) {
                items.append(.piece(file: index, range: piece.range, units: piece.units))
                keys.append((file.startTime, file.rendition))
            }
        }
        // A rendition's files are planned in playlist order: with one rendition, nothing moves.
        if zip(keys, keys.dropFirst()).allSatisfy({ ($0.time, $0.rendition) <= ($1.time, $1.rendition) }) {
            return items
        }
        let order = items.indices.sorted { lhs, rhs in
            (keys[lhs].time, keys[lhs].rendition, lhs) < (keys[rhs].time, keys[rhs].rendition, rhs)
        }
        return order.map { items[$0] }
    }

    /// What a byte-range file's ranges record says now.
    func rangesRecord(of index: Int) -> RangesRecord {
        RangesRecord(
            url: files[index].url, validator: ranged[index]?.validator, done: ranged[index]?.done ?? ByteRangeSet())
    }

    /// The bytes of every file done.
    var bytesInPlace: Int64 {
        var bytes: Int64 = 0
        for case .done(let length, _) in states { bytes += length }
        return bytes
    }

    /// Counts a finished file in the size estimate.
    private mutating func count(doneFile index: Int, length: Int64) {
        let file = files[index]
        if file.kind == .segment {
            if file.parts != nil && !file.rebased {
                estimator.renditions[file.rendition].exactBytes -= file.rangedLength ?? 0
                estimator.renditions[file.rendition].exactDuration -= file.duration
            }
            estimator.renditions[file.rendition].doneBytes += length
            estimator.renditions[file.rendition].doneDuration += file.duration
        } else {
            estimator.renditions[file.rendition].otherBytes += length
        }
    }
}
