import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

extension HLSDownloadEngine {
    /// Runs the transfer workers over every pending file (and, for a live playlist, the reloaders
    /// that add more), with a ticker for progress and checkpoints.
    func transfer() async throws(HLSDownloadError) {
        // Byte-range files whose every range arrived in an earlier run that stopped before moving
        // them into place (a kill during a long decryption, say): no piece is left to end them.
        let finished = state.withLock { state in
            state.ranged.filter { index, ranged in ranged.piecesLeft <= 0 && !state.states[index].isDone }.map(\.key)
        }
        for index in finished.sorted() { try completeRanged(index) }
        let (items, recording) = state.withLock { state in
            (pendingItems(in: state, files: Array(state.files.indices)), state.renditions.contains { !$0.ended })
        }
        queue.enqueue(items)
        if !recording { queue.finish(dropPending: false) }
        let ticker = Task { await self.tick() }
        let outcome: Result<Void, HLSDownloadError>
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<options.connections {
                    group.addTask { try await self.work() }
                }
                if recording {
                    group.addTask { try await self.record() }
                }
                try await group.waitForAll()
            }
            outcome = .success(())
        } catch let error as HLSDownloadError {
            outcome = .failure(error)
        } catch {
            outcome = .failure(.cancelled)
        }
        // The ticker's last checkpoint is written before the caller writes its own: an older
        // snapshot must not land after the final one.
        ticker.cancel()
        await ticker.value
        try outcome.get()
        if Task.isCancelled { throw .cancelled }
    }

    /// The work items for `files` that are not done yet, in media-time order across renditions.
    func pendingItems(in state: EngineState, files indices: [Int]) -> [WorkItem] {
        var items: [(time: Double, rendition: Int, item: WorkItem)] = []
        for index in indices where !state.states[index].isDone {
            let file = state.files[index]
            if file.kind == .key { continue }
            if file.parts == nil {
                items.append((file.startTime, file.rendition, .whole(file: index)))
                continue
            }
            let done = state.ranged[index]?.done ?? ByteRangeSet()
            for piece in pieces(of: file) where !done.contains(piece.range) {
                items.append(
                    (file.startTime, file.rendition, .piece(file: index, range: piece.range, units: piece.units)))
            }
        }
        return items.enumerated().sorted { lhs, rhs in
            (lhs.element.time, lhs.element.rendition, lhs.offset) < (
                rhs.element.time, rhs.element.rendition, rhs.offset
            )
        }.map(\.element.item)
    }

    /// One transfer worker: takes items until the queue is finished.
    private func work() async throws(HLSDownloadError) {
        while let item = await queue.next() {
            if Task.isCancelled { throw .cancelled }
            do throws(HLSDownloadError) {
                switch item {
                case .whole(let index): try await fetchWhole(index)
                case .piece(let index, let range, let units): try await fetchPiece(index, range: range, units: units)
                }
            } catch {
                guard error.kind != .cancelled, options.skipBroken, error.kind != .writeFailed,
                    state.withLock({ $0.files[item.file].kind != .key })
                else { throw error }
                try skip(item, error: error)
            }
        }
        if Task.isCancelled { throw .cancelled }
    }

    // MARK: Whole files

    private func fetchWhole(_ index: Int) async throws(HLSDownloadError) {
        let file = state.withLock { $0.files[index] }
        let finalPath = path(file.path)
        var etag: String?
        if let decryption = file.decryption {
            let encrypted = finalPath + PackageLayout.encryptedSuffix
            if PackageFiles.exists(encrypted) {
                // Fetched whole by a run that stopped before decrypting it: its ETag is on it.
                etag = FileEntityTagAttribute.read(path: encrypted)?.headerValue
            } else {
                etag = try await download(index, file, to: encrypted)
            }
            guard let key = state.withLock({ $0.keys[decryption.keyPath] }) else {
                throw HLSDownloadError(.invalidKey, path: file.path, detail: "the key \(decryption.keyPath) is missing")
            }
            do {
                try PackageFiles.decrypt(
                    encrypted, to: finalPath, key: key, iv: decryption.iv,
                    entityTag: etag.flatMap(EntityTag.init(headerValue:)))
            } catch {
                PackageFiles.remove(encrypted)
                throw HLSDownloadError(error.kind, url: file.url, path: file.path, detail: error.detail)
            }
            PackageFiles.remove(encrypted)
        } else {
            etag = try await download(index, file, to: finalPath)
        }
        finished(index, length: PackageFiles.size(finalPath) ?? 0, etag: etag)
    }

    /// Downloads a whole resource with the client's resumable file download.
    ///
    /// - Returns: The strong ETag the server sent, if any.
    private func download(
        _ index: Int, _ file: PlannedFile, to destination: String
    ) async throws(HLSDownloadError)
        -> String?
    {
        let request = HTTPClientRequest(url: file.url, headers: options.headers)
        let download = client.download(
            request, to: URL(fileURLWithPath: destination, isDirectory: false),
            options: HTTPFileDownloadOptions(
                retry: options.retry, progressInterval: .milliseconds(200), recordsEntityTag: true))
        let watcher = Task {
            for await progress in download.progress {
                self.progressed(index, received: progress.bytesReceived, transferred: progress.bytesTransferred)
            }
        }
        do {
            let result = try await download.result()
            await watcher.value
            state.withLock { state in
                let counted = state.inFlight[index]?.transferred ?? 0
                state.bytesTransferred += result.bytesTransferred - counted
                state.inFlight[index]?.transferred = result.bytesTransferred
                state.bytesDone += result.byteCount - (state.inFlight[index]?.counted ?? 0)
                state.inFlight[index]?.counted = result.byteCount
            }
            if case .entityTag(let tag) = result.validator { return tag.headerValue }
            return nil
        } catch {
            download.cancel()
            await watcher.value
            let failure = error as? HTTPClientError ?? HTTPClientError(.transportFailure, detail: "\(error)")
            if failure.kind == .cancelled || Task.isCancelled { throw .cancelled }
            if failure.kind == .fileWriteFailed {
                throw HLSDownloadError(.writeFailed, url: file.url, path: file.path, detail: "\(failure)")
            }
            throw HLSDownloadError(
                .fileFailed, url: failure.url ?? file.url, path: file.path, detail: failure.description,
                underlying: failure)
        }
    }

    private func progressed(_ index: Int, received: Int64, transferred: Int64) {
        state.withLock { state in
            let previous = state.inFlight[index] ?? (0, 0)
            state.bytesDone += received - previous.counted
            state.bytesTransferred += transferred - previous.transferred
            state.inFlight[index] = (received, transferred)
        }
    }

    /// Marks a file done once it is in place under its final name.
    private func finished(_ index: Int, length: Int64, etag: String?) {
        state.withLock { state in
            let file = state.files[index]
            if file.parts == nil {
                state.unitsDone += file.units
                // Bytes were counted as they came; a decrypted file is a little shorter.
                state.inFlight[index] = nil
            }
            state.states[index] = .done(length: length, etag: etag)
            state.filesFetched += 1
            count(doneFile: index, length: length, in: &state)
            state.manifestDirty = true
        }
    }

    // MARK: Byte ranges

    /// Fetches one piece of a byte-range file. With `skipBroken`, a piece of several ranges that
    /// fails is fetched again range by range, so that only the broken ones become gaps.
    private func fetchPiece(_ index: Int, range: ByteRange, units: Int) async throws(HLSDownloadError) {
        do {
            try await fetchBytes(index, range: range)
        } catch {
            guard options.skipBroken, units > 1, error.kind != .cancelled, error.kind != .writeFailed else {
                throw error
            }
            let (file, parts) = state.withLock { state in
                (state.files[index], (state.files[index].parts ?? []).filter { range.contains($0) && !$0.isEmpty })
            }
            var failed = 0
            for part in parts {
                do {
                    try await fetchBytes(index, range: part)
                } catch {
                    guard error.kind != .cancelled, error.kind != .writeFailed else { throw error }
                    logger.warning("skipping bytes \(part) of \(file.path): \(error)")
                    events.yield(.skipped(path: file.path, url: error.url ?? file.url, reason: error.description))
                    state.withLock { $0.ranged[index]?.failed.insert(part) }
                    failed += 1
                }
            }
            try endPiece(index, unitsDone: max(0, units - failed), unitsSkipped: min(units, failed))
            return
        }
        try endPiece(index, unitsDone: units, unitsSkipped: 0)
    }

    /// Fetches the bytes of `range` not yet in a byte-range file's partial data, and saves its
    /// ranges record whatever happens.
    private func fetchBytes(_ index: Int, range: ByteRange) async throws(HLSDownloadError) {
        let (file, missing, validator) = state.withLock { state in
            let ranged = state.ranged[index] ?? RangedFileState()
            return (
                state.files[index], ByteRangeSet([range]).subtracting(ranged.done).ranges, ranged.validator
            )
        }
        guard !missing.isEmpty else { return }
        let finalPath = path(file.path)
        let partial = finalPath + PackageLayout.rangedPartialSuffix
        let descriptor = try PackageFiles.openForWriting(partial)
        let shift = file.rebased ? (file.parts?.first?.lowerBound ?? 0) : 0
        let fetcher = RangeFetcher(client: client, headers: options.headers, policy: options.retry)
        let recordPath = finalPath + PackageLayout.rangesRecordSuffix
        var failure: HLSDownloadError?
        var current = validator
        var lastSave = ContinuousClock.now
        for gap in missing {
            do {
                let outcome = try await fetcher.fetch(
                    url: file.url, range: gap, into: descriptor, shift: shift, validator: current
                ) { written, validator in
                    let record: RangesRecord? = state.withLock { state in
                        state.ranged[index, default: RangedFileState()].done.insert(written)
                        if state.ranged[index]?.validator == nil { state.ranged[index]?.validator = validator }
                        state.bytesDone += written.count
                        state.bytesTransferred += written.count
                        // A request may run for minutes: what it wrote is recorded once a second,
                        // so that a kill -9 costs at most that much (Ctrl-C saves at the end).
                        guard lastSave.duration(to: .now) >= .seconds(1) else { return nil }
                        lastSave = .now
                        return RangesRecord(
                            url: file.url, validator: state.ranged[index]?.validator,
                            done: state.ranged[index]?.done ?? ByteRangeSet())
                    }
                    try? record?.save(recordPath)
                }
                current = current ?? outcome.validator
                state.withLock { state in
                    if state.ranged[index]?.validator == nil { state.ranged[index]?.validator = outcome.validator }
                }
            } catch {
                failure = HLSDownloadError(
                    error.kind, url: error.url ?? file.url, status: error.status, path: file.path,
                    detail: error.detail, underlying: error.underlying)
                break
            }
        }
        close(descriptor)
        let record = state.withLock { state in
            RangesRecord(
                url: file.url, validator: state.ranged[index]?.validator,
                done: state.ranged[index]?.done ?? ByteRangeSet())
        }
        try? record.save(recordPath)
        if let failure { throw failure }
    }

    /// Counts a finished piece; the last one moves the file into place.
    private func endPiece(_ index: Int, unitsDone: Int, unitsSkipped: Int) throws(HLSDownloadError) {
        let complete = state.withLock { state in
            state.unitsDone += unitsDone
            state.unitsSkipped += unitsSkipped
            state.ranged[index]?.piecesLeft -= 1
            state.manifestDirty = true
            return (state.ranged[index]?.piecesLeft ?? 0) <= 0
        }
        if complete { try completeRanged(index) }
    }

    /// Moves a byte-range file into place once every piece has ended (decrypting an own-file segment).
    func completeRanged(_ index: Int) throws(HLSDownloadError) {
        let (file, ranged) = state.withLock { ($0.files[index], $0.ranged[index] ?? RangedFileState()) }
        let finalPath = path(file.path)
        let partial = finalPath + PackageLayout.rangedPartialSuffix
        guard !ranged.done.isEmpty || (file.rangedLength ?? 0) == 0 else {
            state.withLock { state in
                state.states[index] = .skipped(reason: "every byte range failed", status: nil)
            }
            return
        }
        if !PackageFiles.exists(partial) { _ = try PackageFiles.openForWriting(partial).closeReturningZero() }
        if file.decryption != nil && !ranged.failed.isEmpty {
            // A segment to decrypt with bytes missing cannot be decrypted: it stays partial, with
            // its ranges record, for a later run, and is a gap now (found in review: the failed
            // decryption failed the whole download under --skip-broken).
            state.withLock { state in
                state.states[index] = .skipped(reason: "some byte ranges failed", status: nil)
                state.manifestDirty = true
            }
            return
        }
        var tag: EntityTag?
        if case .entityTag(let validator) = ranged.validator, ranged.failed.isEmpty { tag = validator }
        if let decryption = file.decryption {
            guard let key = state.withLock({ $0.keys[decryption.keyPath] }) else {
                throw HLSDownloadError(.invalidKey, path: file.path, detail: "the key \(decryption.keyPath) is missing")
            }
            do {
                try PackageFiles.decrypt(partial, to: finalPath, key: key, iv: decryption.iv, entityTag: tag)
            } catch {
                throw HLSDownloadError(error.kind, url: file.url, path: file.path, detail: error.detail)
            }
            PackageFiles.remove(partial)
        } else {
            if let tag { FileEntityTagAttribute.set(tag, path: partial) }
            try PackageFiles.rename(partial, to: finalPath)
        }
        // The record stays while ranges failed: a new run fetches only those.
        if ranged.failed.isEmpty { PackageFiles.remove(finalPath + PackageLayout.rangesRecordSuffix) }
        var etag: String?
        if case .entityTag(let validator) = ranged.validator { etag = validator.headerValue }
        state.withLock { state in
            let length = PackageFiles.size(finalPath) ?? 0
            if ranged.failed.isEmpty {
                state.states[index] = .done(length: length, etag: etag)
            } else {
                state.states[index] = .skipped(reason: "some byte ranges failed", status: nil)
            }
            state.filesFetched += 1
            if file.kind == .segment {
                state.estimator.renditions[file.rendition].exactBytes -= file.rangedLength ?? 0
                state.estimator.renditions[file.rendition].exactDuration -= file.duration
                state.estimator.renditions[file.rendition].doneBytes += length
                state.estimator.renditions[file.rendition].doneDuration += file.duration
            }
            state.manifestDirty = true
        }
    }

    // MARK: Skipping

    /// Records a failed item as skipped (`--skip-broken`): its segments become EXT-X-GAP.
    private func skip(_ item: WorkItem, error: HLSDownloadError) throws(HLSDownloadError) {
        let file = state.withLock { $0.files[item.file] }
        logger.warning("skipping \(file.path): \(error)")
        events.yield(.skipped(path: file.path, url: error.url ?? file.url, reason: error.description))
        switch item {
        case .whole(let index):
            state.withLock { state in
                state.states[index] = .skipped(reason: error.description, status: error.status)
                state.unitsSkipped += file.units
                if let counted = state.inFlight[index]?.counted { state.bytesDone -= counted }
                state.inFlight[index] = nil
                state.manifestDirty = true
            }
        case .piece(let index, let range, let units):
            let complete = state.withLock { state in
                state.ranged[index]?.failed.insert(range)
                state.ranged[index]?.piecesLeft -= 1
                state.unitsSkipped += units
                state.manifestDirty = true
                return (state.ranged[index]?.piecesLeft ?? 0) <= 0
            }
            if complete { try completeRanged(index) }
            state.withLock { state in
                if case .skipped = state.states[index] {
                    state.states[index] = .skipped(reason: error.description, status: error.status)
                }
            }
        }
    }
}

extension Int32 {
    /// Closes the descriptor.
    fileprivate func closeReturningZero() -> Int32 {
        close(self)
        return 0
    }
}
