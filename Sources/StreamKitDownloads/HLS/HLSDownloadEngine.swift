import Foundation
import StreamKitCore
import StreamKitDASH
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMPEGTS
import Synchronization

/// One rendition while it is downloaded or recorded.
struct RenditionState: Sendable {
    var selected: SelectedRendition
    var header: MediaPlaylistHeader
    var planner: RenditionPlanner
    var segments = ChunkedArray<RecordedSegment>()
    /// For a live recording: no more segments are taken.
    var ended = true
    /// For a live recording: the source media sequence number of the last segment taken.
    var lastSourceSequence: UInt64?
    var recordedDuration = 0.0
    /// For a live recording: what its recorded source file holds (reloads append to it).
    var sourceFile: RecordedSourceFile?
}

/// Everything the engine's tasks share, under one lock: the plan of renditions, keys and the
/// source's multivariant playlist, and the bookkeeping of every file.
struct EngineState: Sendable {
    var renditions: [RenditionState] = []
    var keys: [String: [UInt8]] = [:]
    /// The protection of SAMPLE-AES fMP4 init segments, by URL and range, read once per run.
    var mp4Protections: [String: MP4Protection] = [:]
    var master: MultivariantPlaylist?
    var masterURL: String?
    var variant: VariantStream?
    var live = false
    var created = PackageStore.timestamp()
    var books: HLSDownloadBookkeeping
    /// Key files removed at the end of a `--decrypt` download: no longer on disk, not listed.
    var removedKeys: Set<String> = []
    /// Key files put in place from keys the user gave (``HLSUserKeys``), not fetched.
    var userKeyPaths: Set<String> = []
    /// Playlist URLs whose warnings were reported.
    var warnedPlaylists: Set<String> = []
    /// The playlists of the completed head while the transfer runs.
    var growing = GrowingPlaylists()
    /// The selection's `--section` and `--exclude-segments`.
    var filter = SegmentFilter()
    /// For an MPD source: the MPD as last fetched, read as HLS.
    var dash: DASHPresentation?
    /// For a live MPD: each Representation's last segment at the last reload, by key, so that
    /// the next reload numbers its segments the same (``DASHLiveNumbering``).
    var dashMarks: [DASHPresentation.Key: DASHLiveNumbering.Mark] = [:]
    /// For a SegmentBase: each `sidx` box as fetched, by the file's URL, with its offset in it.
    var dashIndexBytes: [String: (offset: Int64, bytes: [UInt8])] = [:]
    /// For a live MPD: the last reload's fetch, which the renditions share (``HLSDownloadEngine/sharedMPD(_:)``).
    var dashReload: (started: ContinuousClock.Instant, fetch: Task<DASHPresentation, any Error>)?
    /// For a live MPD: seconds the server's clock is ahead of ours, read once from its UTCTiming.
    var dashClockOffset: Double?
    /// The journal continuing the package.json last written whole at a checkpoint, if any.
    var journal: CheckpointJournal?
}

/// Runs one ``HLSDownloadJob``: discovers or restores the plan, fetches keys, then runs the
/// transfer workers (and for live playlists the reloaders), and writes the playlists at the end.
final class HLSDownloadEngine: Sendable {
    let job: HLSDownloadJob
    let client: HTTPClient
    let logger: Logger
    let events: AsyncStream<HLSDownloadEvent>.Continuation
    let control: RecordingControl
    let directory: URL
    let state: Mutex<EngineState>
    let queue = WorkQueue<WorkItem>()
    /// How many transfers run at once (``HLSDownloadOptions/mostConnections``).
    let ramp: Mutex<TransferRamp>

    var options: HLSDownloadOptions { job.options }

    init(
        job: HLSDownloadJob, client: HTTPClient, logger: Logger, events: AsyncStream<HLSDownloadEvent>.Continuation,
        control: RecordingControl
    ) {
        self.job = job
        self.client = client
        self.logger = logger
        self.events = events
        self.control = control
        directory = job.packageDirectory.standardizedFileURL
        ramp = Mutex(
            TransferRamp(
                initial: job.options.connections, maximum: job.options.mostConnections ?? job.options.connections,
                startingAt: .now))
        state = Mutex(
            EngineState(
                books: HLSDownloadBookkeeping(
                    connections: job.options.connections, minimumPieceBytes: job.options.minimumRangePieceBytes)))
    }

    /// The absolute path of a package path.
    func path(_ relative: String) -> String { directory.path + "/" + relative }

    func run() async throws(HLSDownloadError) -> HLSDownloadResult {
        let (existing, created) = try prepareDirectory()
        var planned = false
        do throws(HLSDownloadError) {
            try await setUp(existing: existing)
            planned = true
            // A live playlist may name the key later: its unused keys are told at the end.
            let live = state.withLock { $0.live }
            if !live { reportUnusedUserKeys() }
            try await fetchPendingKeys()
            try await transfer()
            if live { reportUnusedUserKeys() }
            return try finish()
        } catch {
            let error = explainingUserKey(error)
            if planned {
                let status: PackageStatus = error.kind == .cancelled ? .interrupted : .failed
                try? saveManifest(status: status, error: error.kind == .cancelled ? nil : error.description)
            } else if created {
                try? FileManager.default.removeItem(at: directory)
            }
            emitProgress()
            throw error
        }
    }

    // MARK: Setting up

    /// Creates the folder, or checks that it holds this job's package.
    private func prepareDirectory() throws(HLSDownloadError) -> (PackageManifest?, created: Bool) {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw HLSDownloadError(.packageConflict, detail: "\(directory.path) is a file, not a package folder")
            }
            if let manifest = try PackageStore.load(from: directory) {
                guard manifest.source == job.source, manifest.selection == job.selection,
                    manifest.decrypt == job.options.decrypt
                else {
                    throw HLSDownloadError(
                        .packageConflict, url: manifest.source,
                        detail: "\(directory.path) holds the package of another download (\(manifest.source), "
                            + "variant \(manifest.selection.variant), audio \(manifest.selection.audio), "
                            + "subtitles \(manifest.selection.subtitles)\(Self.filterWords(manifest.selection))"
                            + "\(manifest.decrypt ? ", decrypted" : ""))")
                }
                removeStaleTemporaryFiles(renditionFolders: manifest.renditions.map(\.folder))
                return (manifest, false)
            }
            let contents = (try? fileManager.contentsOfDirectory(atPath: directory.path)) ?? []
            guard contents.isEmpty else {
                throw HLSDownloadError(
                    .packageConflict,
                    detail: "\(directory.path) is not empty and holds no \(PackageLayout.manifestName)")
            }
            try claim()
            return (nil, false)
        }
        try claim()
        return (nil, true)
    }

    /// Removes what an atomic write killed half-way left (package.json, the recorded source
    /// playlists, and in the rendition folders the media playlists, keys, subtitles and ranges
    /// records are written under a temporary name, then renamed): nothing else writes to this
    /// package while it runs. A folder name read from the manifest is used only when it is one
    /// plain name, so that a damaged manifest cannot point the sweep outside the package.
    private func removeStaleTemporaryFiles(renditionFolders: [String]) {
        let plain = renditionFolders.filter { !$0.isEmpty && !$0.contains("/") && $0 != "." && $0 != ".." }
        for folder in [directory.path, path(PackageLayout.internalFolder)] + plain.map(path) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where name.hasSuffix(PackageLayout.temporarySuffix) {
                unlink(folder + "/" + name)
            }
        }
    }

    /// Makes the folder this job's package before anything else is written to it: a manifest with
    /// no renditions yet, so that a process killed while the first playlist is on its way leaves
    /// a folder the next run recognises and resumes, not one it must refuse as someone else's.
    private func claim() throws(HLSDownloadError) {
        try PackageFiles.createDirectory(path(PackageLayout.internalFolder))
        try saveManifest(status: .downloading, error: nil)
    }

    private func setUp(existing: PackageManifest?) async throws(HLSDownloadError) {
        let filter = try SegmentFilter(job.selection)
        state.withLock { $0.filter = filter }
        if let existing, canRestore(existing) {
            try await restore(existing)
        } else {
            try await discover()
        }
        let summary = try await reconcile(with: existing)
        for index in state.withLock({ $0.renditions.indices }) { try saveSource(of: index) }
        try saveManifest(status: state.withLock { $0.live } ? .recording : .downloading, error: nil, continued: true)
        events.yield(.planned(summary))
    }

    private func canRestore(_ manifest: PackageManifest) -> Bool {
        !manifest.renditions.isEmpty
            && manifest.renditions.allSatisfy { FileManager.default.fileExists(atPath: sourcePath(of: $0.folder)) }
    }

    func sourcePath(of folder: String) -> String {
        path(PackageLayout.internalFolder + "/" + folder + ".m3u8")
    }

    /// Fetches the source playlist, chooses renditions, fetches their media playlists and plans them.
    private func discover() async throws(HLSDownloadError) {
        let (bytes, finalURL) = try await fetchPlaylist(job.source, accepting: .playlistOrMPD)
        var chosen: [(SelectedRendition, MediaPlaylist, String)] = []
        var master: MultivariantPlaylist?
        var variant: VariantStream?
        var dash: DASHPresentation?
        if MPD.looksLikeMPD(bytes) {
            let (multivariant, presentation) = try await dashMaster(bytes, url: finalURL)
            let choice = try RenditionSelector.choose(
                from: multivariant, masterURL: finalURL, selection: job.selection)
            // Every URI of the translated playlist carries its key.
            let keys = choice.renditions.map { DASHPresentation.Key(url: $0.playlistURL)! }
            try checkProtection(presentation, keys: keys)
            for (rendition, key) in zip(choice.renditions, keys) {
                chosen.append((rendition, try await dashMediaPlaylist(presentation, key: key), rendition.playlistURL))
            }
            master = multivariant
            variant = choice.variant
            dash = presentation
            try saveSourceMPD(bytes)
        } else {
            (chosen, master, variant) = try await discoverHLS(bytes, url: finalURL)
        }
        try plan(chosen, master: master, variant: variant, dash: dash, finalURL: finalURL)
    }

    /// Chooses the renditions of an HLS source and fetches their media playlists.
    private func discoverHLS(
        _ bytes: [UInt8], url finalURL: String
    ) async throws(HLSDownloadError) -> (
        [(SelectedRendition, MediaPlaylist, String)], MultivariantPlaylist?, VariantStream?
    ) {
        let parsed = try await parse(bytes, url: finalURL, importedVariables: [:])
        var chosen: [(SelectedRendition, MediaPlaylist, String)] = []
        var master: MultivariantPlaylist?
        var variant: VariantStream?
        switch parsed.playlist {
        case .media(let media):
            try checkLimits(media, url: finalURL)
            chosen = [
                (
                    SelectedRendition(role: .main, folder: "video", playlistURL: finalURL, bandwidth: nil),
                    media, finalURL
                )
            ]
        case .multivariant(let multivariant):
            let choice = try RenditionSelector.choose(
                from: multivariant, masterURL: finalURL, selection: job.selection)
            master = multivariant
            variant = choice.variant
            let variables = parsed.variables
            let fetched = try await fetchMediaPlaylists(choice.renditions.map(\.playlistURL), variables: variables)
            chosen = zip(choice.renditions, fetched).map { ($0, $1.playlist, $1.url) }
        }
        return (chosen, master, variant)
    }

    /// Plans the chosen renditions' segments.
    private func plan(
        _ chosen: [(SelectedRendition, MediaPlaylist, String)], master: MultivariantPlaylist?,
        variant: VariantStream?, dash: DASHPresentation?, finalURL: String
    ) throws(HLSDownloadError) {
        let live = chosen.contains { $0.1.isLive }
        let filter = state.withLock { $0.filter }
        let limit = live ? liveLimit : nil
        if !live, let main = chosen.first {
            try filter.check(duration: main.1.segments.reduce(0) { $0 + $1.duration }, url: main.2)
        }
        try state.withLock { (state) throws(HLSDownloadError) in
            state.master = master
            state.masterURL = master == nil ? nil : finalURL
            state.variant = variant
            state.dash = dash
            state.live = live
            for (index, (selected, media, url)) in chosen.enumerated() {
                let planner = RenditionPlanner(
                    rendition: index, folder: selected.folder, role: selected.role, decrypt: options.decrypt,
                    sharesRangedFiles: !live, iv: options.userKeys.iv)
                state.renditions.append(
                    RenditionState(selected: selected, header: MediaPlaylistHeader(media), planner: planner))
                state.books.renditionPlanned(priorBytesPerSecond: selected.bandwidth.map { Double($0) / 8 })
                guard live else {
                    // Planned as the segments are resolved: an array of them would hold a long
                    // playlist's every segment twice more while it is planned.
                    try plan(rendition: index, playlistURL: url, in: &state) { (add) throws(HLSDownloadError) in
                        try media.forEachResolvedSegment(baseURL: url) { (resolved) throws(HLSDownloadError) in
                            try add(media.segments[resolved.index], resolved)
                        }
                    }
                    continue
                }
                var entries: [(segment: MediaSegment, resolved: ResolvedSegment)] = []
                entries.reserveCapacity(media.segments.count)
                media.forEachResolvedSegment(baseURL: url) { entries.append((media.segments[$0.index], $0)) }
                // The section's start picks where in the window the recording begins.
                entries.removeFirst(try filter.liveStart(durations: entries.map(\.0.duration), url: url))
                let window = LiveWindow.take(entries, after: nil, recordedDuration: 0, limit: limit)
                state.renditions[index].ended = !media.isLive || window.reachedLimit
                try plan(window.entries, rendition: index, playlistURL: url, in: &state)
            }
        }
    }

    /// Rebuilds the plan from the recorded source playlists of an earlier run.
    private func restore(_ manifest: PackageManifest) async throws(HLSDownloadError) {
        let dash =
            manifest.sourceKind == PackageManifest.dashKind
            ? try await restoreDASH(mpdURL: manifest.masterURL ?? manifest.source) : nil
        var loaded: [(PackageManifest.Rendition, MediaPlaylist, UInt64?)] = []
        for record in manifest.renditions {
            let sourcePath = sourcePath(of: record.folder)
            guard let data = FileManager.default.contents(atPath: sourcePath) else {
                throw HLSDownloadError(.packageConflict, detail: "cannot read \(sourcePath)")
            }
            let (source, recordedLast) = Self.recordedSource(data)
            let parsed: ParsedPlaylist
            do {
                parsed = try Playlist.parse(source)
            } catch {
                throw HLSDownloadError(
                    .packageConflict, detail: "the recorded playlist \(sourcePath) does not parse: \(error)")
            }
            guard case .media(let media) = parsed.playlist else {
                throw HLSDownloadError(.packageConflict, detail: "\(sourcePath) is not a media playlist")
            }
            loaded.append((record, media, recordedLast))
        }
        try state.withLock { (state) throws(HLSDownloadError) in
            state.master = manifest.master
            state.masterURL = manifest.masterURL
            state.variant = manifest.variant
            state.dash = dash
            state.live = manifest.live
            state.created = manifest.created
            for (index, (record, media, recordedLast)) in loaded.enumerated() {
                let role = RenditionRole(rawValue: record.role) ?? .main
                let selected = SelectedRendition(
                    role: role, folder: record.folder, playlistURL: record.playlistURL, groupID: record.groupID,
                    name: record.name, language: record.language, bandwidth: record.bandwidth)
                let planner = RenditionPlanner(
                    rendition: index, folder: record.folder, role: role, decrypt: manifest.decrypt,
                    sharesRangedFiles: !manifest.live, iv: options.userKeys.iv)
                var rendition = RenditionState(selected: selected, header: MediaPlaylistHeader(media), planner: planner)
                rendition.ended = !manifest.live || record.ended
                state.renditions.append(rendition)
                state.books.renditionPlanned(priorBytesPerSecond: record.bandwidth.map { Double($0) / 8 })
                try plan(rendition: index, playlistURL: sourcePath(of: record.folder), in: &state) {
                    (add) throws(HLSDownloadError) in
                    try media.forEachResolvedSegment { (resolved) throws(HLSDownloadError) in
                        try add(media.segments[resolved.index], resolved)
                    }
                }
                // The recorded source is written before package.json: the later of the two.
                state.renditions[index].lastSourceSequence =
                    [record.lastSourceSequence, recordedLast].compactMap { $0 }.max()
            }
        }
    }

    /// Marks files found on disk as done (checking recorded lengths, and recorded ETags with the
    /// server), loads byte-range progress, and creates the rendition folders.
    private func reconcile(with manifest: PackageManifest?) async throws(HLSDownloadError) -> HLSPackageSummary {
        let records = Dictionary(
            (manifest?.files ?? []).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let (files, folders) = state.withLock { ($0.books.files, $0.renditions.map(\.selected.folder)) }
        for folder in folders { try PackageFiles.createDirectory(path(folder)) }
        var outcomes = ReconciledFiles()
        for file in files {
            outcomes.append(reconcile(file, record: records[file.path]))
        }
        let checked = await verifyCompleted(&outcomes, files: files, records: records, status: manifest?.status)
        if Task.isCancelled { throw .cancelled }
        return state.withLock { state in
            for (index, fileState) in outcomes.states.enumerated() {
                state.books.fileRestored(index, fileState, outcomes.ranged[index])
            }
            var summary = summary(in: state)
            summary.filesVerified = checked.verified
            summary.filesChanged = checked.changed
            return summary
        }
    }

    /// Where one file stands on disk. With `keepingFinal` false, a file in place is not counted as
    /// done (its resource changed on the server): it is fetched again and replaced when complete.
    func reconcile(
        _ file: PlannedFile, record: PackageManifest.File?, keepingFinal: Bool = true
    ) -> (FileState, RangedFileState?) {
        let finalPath = path(file.path)
        let rangesRecordLeft = file.parts != nil && PackageFiles.exists(finalPath + PackageLayout.rangesRecordSuffix)
        if file.parts != nil, !file.rebased, file.decryption == nil, PackageFiles.exists(finalPath),
            record?.state == "gap" || rangesRecordLeft,
            !PackageFiles.exists(finalPath + PackageLayout.rangedPartialSuffix)
        {
            // A byte-range file finished with gaps (its ranges record stays while ranges failed,
            // so this is known even when the run was killed before package.json said so): put it
            // back to partial and fetch what failed. Not when a partial file is there: that is a
            // new fetch of a resource changed on the server, and the record is the new fetch's
            // (found in review: the old file's bytes were taken for the new version's).
            try? PackageFiles.rename(finalPath, to: finalPath + PackageLayout.rangedPartialSuffix)
        }
        if keepingFinal, let size = PackageFiles.size(finalPath) {
            if let expected = record?.length, expected != size || record?.state == "gap" {
                PackageFiles.remove(finalPath)
            } else {
                // The ETag is also on the file itself, for a file put in place after the last
                // checkpoint of package.json (a kill within a second of it).
                let etag = record?.etag ?? FileEntityTagAttribute.read(path: finalPath)?.headerValue
                return (.done(length: size, etag: etag), nil)
            }
        }
        guard let parts = file.parts else { return (.pending, nil) }
        var ranged = RangedFileState()
        if let saved = RangesRecord.load(finalPath + PackageLayout.rangesRecordSuffix), saved.url == file.url,
            PackageFiles.exists(finalPath + PackageLayout.rangedPartialSuffix)
        {
            ranged.done = saved.done
            ranged.validator = saved.validator
        } else {
            PackageFiles.remove(finalPath + PackageLayout.rangedPartialSuffix)
            PackageFiles.remove(finalPath + PackageLayout.rangesRecordSuffix)
        }
        _ = parts
        return (.pending, ranged)
    }

    func summary(in state: EngineState) -> HLSPackageSummary {
        HLSPackageSummary(
            id: job.packageID, directory: directory,
            renditions: state.renditions.map { rendition in
                HLSPackageSummary.Rendition(
                    folder: rendition.selected.folder, role: rendition.selected.role.rawValue,
                    language: rendition.selected.language,
                    segments: rendition.segments.count { $0.excluded == nil }, duration: rendition.recordedDuration,
                    segmentsExcluded: rendition.segments.count { $0.excluded == .matchedPattern },
                    segmentsOutsideSections: rendition.segments.count { $0.excluded == .outsideSections })
            },
            files: state.books.files.count, filesAlreadyDone: state.books.filesAlreadyDone, live: state.live)
    }
}

extension HLSDownloadEngine {
    /// For a live recording: the most seconds of media to record (`--live-duration`, or the
    /// length of the `--section`), if any.
    var liveLimit: Double? {
        state.withLock { $0.filter }.recordingLimit(liveDuration: options.liveDuration.map(\.secondsValue))
    }

    /// `, sections …, excluding …` for a selection that has them.
    static func filterWords(_ selection: HLSSelection) -> String {
        (selection.sections.isEmpty ? "" : ", sections " + selection.sections.map(\.description).joined(separator: " "))
            + (selection.excludedSegments.isEmpty
                ? "" : ", excluding " + selection.excludedSegments.map { "'\($0)'" }.joined(separator: " "))
    }
}

extension Duration {
    /// The duration in seconds.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
