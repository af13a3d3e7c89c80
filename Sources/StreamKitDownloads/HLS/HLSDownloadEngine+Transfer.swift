import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMPEGTS
import Synchronization

extension HLSDownloadEngine {
    /// Runs the transfer workers over every pending file (and, for a live playlist, the reloaders
    /// that add more), with a ticker for progress and checkpoints.
    func transfer() async throws(HLSDownloadError) {
        let (recording, start) = state.withLock { state in
            let recording = state.renditions.contains { !$0.ended }
            return (recording, state.books.transferStarted(recording: recording, at: .now))
        }
        try perform(start)
        // A resumed download serves the head it has at once.
        publishGrowingPlaylists()
        let ticker = Task { await self.tick() }
        // A live recording fetches what the source makes, no faster: it keeps its first count.
        let slots = ramp.withLock { ramp in
            let transferred = state.withLock { $0.books.bytesTransferred }
            ramp = TransferRamp(
                initial: ramp.target, maximum: recording ? ramp.target : ramp.maximum, step: ramp.step,
                startingAt: .now, bytesTransferred: transferred)
            return ramp.ceiling
        }
        let outcome: Result<Void, HLSDownloadError>
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for slot in 0..<slots {
                    group.addTask { try await self.work(slot: slot) }
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
        // The ticker's last checkpoint is written before the caller writes its own, and none
        // after the transfer stopped: an older snapshot must not land after the final one.
        state.withLock { $0.books.transferStopped() }
        ticker.cancel()
        await ticker.value
        try outcome.get()
        if Task.isCancelled { throw .cancelled }
    }

    /// Performs the actions of a transition, in order.
    func perform(_ actions: [HLSDownloadAction]) throws(HLSDownloadError) {
        for action in actions {
            switch action {
            case .reportProgress:
                emitProgress()
            case .writeCheckpoint:
                let due = ContinuousClock.now
                try? checkpoint(status: state.withLock { $0.live } ? .recording : .downloading)
                state.withLock { $0.books.checkpointWritten(dueAt: due, writtenAt: .now) }
            case .enqueue(let items):
                queue.enqueue(items)
            case .finishQueue:
                queue.finish(dropPending: false)
            case .completeRangedFile(let index, let failure):
                try completeRanged(index, failure: failure)
            case .reportSkipped(let path, let url, let bytes, let error):
                if let bytes {
                    logger.warning("skipping bytes \(bytes) of \(path): \(error)")
                } else {
                    logger.warning("skipping \(path): \(error)")
                }
                events.yield(.skipped(path: path, url: error.url ?? url, reason: error.description))
            case .fail(let error):
                throw error
            }
        }
    }

    /// One transfer worker: takes items until the queue is finished, while the ramp lets its
    /// slot (from 0) take work.
    private func work(slot: Int) async throws(HLSDownloadError) {
        while true {
            switch ramp.withLock({ $0.admits(slot: slot) }) {
            case .take:
                break
            case .leave:
                return
            case .wait:
                if queue.isExhausted { return }
                do {
                    try await Task.sleep(for: .milliseconds(50))
                } catch {
                    throw .cancelled
                }
                continue
            }
            guard let item = await queue.next() else { break }
            if Task.isCancelled { throw .cancelled }
            do throws(HLSDownloadError) {
                switch item {
                case .whole(let index): try await fetchWhole(index)
                case .piece(let index, let range, let units): try await fetchPiece(index, range: range, units: units)
                }
            } catch {
                let actions = state.withLock { state in
                    state.books.itemFailed(item, error: error, skipBroken: options.skipBroken)
                }
                try perform(actions)
            }
            let transferred = state.withLock { $0.books.bytesTransferred }
            let changed = ramp.withLock { $0.itemFinished(bytesTransferred: transferred, at: .now) }
            if changed {
                let target = ramp.withLock { $0.target }
                logger.debug("transfers at once: \(target)")
            }
        }
        if Task.isCancelled { throw .cancelled }
    }

    // MARK: Whole files

    private func fetchWhole(_ index: Int) async throws(HLSDownloadError) {
        let file = state.withLock { $0.books.files[index] }
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
                var protection: MP4Protection?
                if case .sampleAESMP4(let initURL, let initRange) = decryption.scheme {
                    protection = try await mp4Protection(initURL: initURL, range: initRange)
                }
                try PackageFiles.decrypt(
                    encrypted, to: finalPath, key: key, iv: decryption.iv, scheme: decryption.scheme,
                    protection: protection, entityTag: etag.flatMap(EntityTag.init(headerValue:)))
            } catch {
                PackageFiles.remove(encrypted)
                throw HLSDownloadError(error.kind, url: file.url, path: file.path, detail: error.detail)
            }
            PackageFiles.remove(encrypted)
        } else {
            etag = try await download(index, file, to: finalPath)
        }
        let length = PackageFiles.size(finalPath) ?? 0
        state.withLock { $0.books.fileFinished(index, length: length, etag: etag) }
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
                self.state.withLock { state in
                    state.books.wholeFileProgressed(
                        index, received: progress.bytesReceived, transferred: progress.bytesTransferred)
                }
            }
        }
        do {
            let result = try await download.result()
            await watcher.value
            state.withLock { state in
                state.books.wholeFileTransferred(
                    index, byteCount: result.byteCount, transferred: result.bytesTransferred)
            }
            if case .entityTag(let tag) = result.validator { return tag.headerValue }
            return nil
        } catch {
            download.cancel()
            await watcher.value
            let failure = error as? HTTPClientError ?? HTTPClientError(.transportFailure, detail: "\(error)")
            if failure.kind == .cancelled || Task.isCancelled { throw .cancelled }
            if failure.kind == .fileWriteFailed {
                throw HLSDownloadError(
                    .writeFailed, url: file.url, path: file.path, detail: "\(failure)", underlying: failure)
            }
            throw HLSDownloadError(
                .fileFailed, url: failure.url ?? file.url, path: file.path, detail: failure.description,
                underlying: failure)
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
            let file = state.withLock { $0.books.files[index] }
            let parts = (file.parts ?? []).filter { range.contains($0) && !$0.isEmpty }
            var failed = 0
            for part in parts {
                do {
                    try await fetchBytes(index, range: part)
                } catch {
                    guard error.kind != .cancelled, error.kind != .writeFailed else { throw error }
                    try perform(state.withLock { $0.books.rangeFailed(part, file: index, error: error) })
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
            let ranged = state.books.ranged[index] ?? RangedFileState()
            return (
                state.books.files[index], ByteRangeSet([range]).subtracting(ranged.done).ranges, ranged.validator
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
                    // A request may run for minutes: what it wrote is recorded once a second,
                    // so that a kill -9 costs at most that much (Ctrl-C saves at the end).
                    let now = ContinuousClock.now
                    let recordDue = lastSave.duration(to: now) >= .seconds(1)
                    if recordDue { lastSave = now }
                    let record = state.withLock { state in
                        state.books.rangeWritten(written, file: index, validator: validator, recordDue: recordDue)
                    }
                    try? record?.save(recordPath)
                }
                current = current ?? outcome.validator
                state.withLock { $0.books.rangeValidatorReceived(outcome.validator, file: index) }
            } catch {
                failure = HLSDownloadError(
                    error.kind, url: error.url ?? file.url, status: error.status, path: file.path,
                    detail: error.detail, underlying: error.underlying)
                break
            }
        }
        close(descriptor)
        let record = state.withLock { $0.books.rangesRecord(of: index) }
        try? record.save(recordPath)
        if let failure { throw failure }
    }

    /// Counts a finished piece; the last one moves the file into place.
    private func endPiece(_ index: Int, unitsDone: Int, unitsSkipped: Int) throws(HLSDownloadError) {
        let actions = state.withLock { $0.books.pieceEnded(index, unitsDone: unitsDone, unitsSkipped: unitsSkipped) }
        try perform(actions)
    }

    /// Moves a byte-range file into place once every piece has ended (decrypting an own-file
    /// segment). A file left a gap gives `failure` as the reason when there is one.
    func completeRanged(_ index: Int, failure: HLSDownloadError?) throws(HLSDownloadError) {
        let (file, ranged) = state.withLock { ($0.books.files[index], $0.books.ranged[index] ?? RangedFileState()) }
        let finalPath = path(file.path)
        let partial = finalPath + PackageLayout.rangedPartialSuffix
        guard !ranged.done.isEmpty || (file.rangedLength ?? 0) == 0 else {
            state.withLock { state in
                state.books.rangedFileBecameGap(
                    index, reason: failure?.description ?? "every byte range failed", status: failure?.status)
            }
            return
        }
        if !PackageFiles.exists(partial) { _ = try PackageFiles.openForWriting(partial).closeReturningZero() }
        if file.decryption != nil && !ranged.failed.isEmpty {
            // A segment to decrypt with bytes missing cannot be decrypted: it stays partial, with
            // its ranges record, for a later run, and is a gap now (found in review: the failed
            // decryption failed the whole download under --skip-broken).
            state.withLock { state in
                state.books.rangedFileBecameGap(
                    index, reason: failure?.description ?? "some byte ranges failed", status: failure?.status)
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
                try PackageFiles.decrypt(
                    partial, to: finalPath, key: key, iv: decryption.iv, scheme: decryption.scheme, entityTag: tag)
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
        let length = PackageFiles.size(finalPath) ?? 0
        state.withLock { state in
            state.books.rangedFilePlaced(
                index, length: length, etag: etag, gapReason: failure?.description ?? "some byte ranges failed",
                status: failure?.status)
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
