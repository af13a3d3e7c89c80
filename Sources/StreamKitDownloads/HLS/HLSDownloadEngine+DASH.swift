import Foundation
import StreamKitCore
import StreamKitDASH
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

/// An MPD source: the engine reads it as HLS (``DASHPresentation``), so that selection, transfers,
/// resume, gaps and live recording are those of HLS, and the package gets an MPD of its own
/// (``DASHPackageComposer``) beside its `index.m3u8`.
extension HLSDownloadEngine {
    /// The source MPD as fetched, kept in the package for resuming and for writing its MPD.
    static let sourceMPDPath = PackageLayout.internalFolder + "/source.mpd"

    /// Parses an MPD, off the cooperative pool when it is large.
    func parseMPD(_ bytes: [UInt8], url: String) async throws(HLSDownloadError) -> MPD {
        let parse = { @Sendable () -> Result<MPD, MPDParseError> in
            Result { () throws(MPDParseError) -> MPD in try MPD.parse(bytes) }
        }
        switch bytes.count < 256 << 10 ? parse() : await offCooperativePool(parse) {
        case .success(let mpd): return mpd
        case .failure(let error):
            throw HLSDownloadError(.invalidPlaylist, url: url, detail: "the MPD cannot be read: \(error)")
        }
    }

    /// The multivariant playlist of an MPD (refusing one with nothing to download), and the
    /// presentation it came from.
    func dashMaster(
        _ bytes: [UInt8], url: String
    ) async throws(HLSDownloadError) -> (MultivariantPlaylist, DASHPresentation) {
        let presentation = DASHPresentation(mpd: try await parseMPD(bytes, url: url), mpdURL: url)
        let master = presentation.multivariant()
        guard !master.variants.isEmpty else {
            throw HLSDownloadError(
                .noMatchingVariant, url: url, detail: "the MPD's first Period has no video or audio Representation")
        }
        return (master, presentation)
    }

    /// Refuses a chosen Representation under ContentProtection (CENC and other DRM) unless
    /// `--keep-encrypted`: its segments would play nowhere without the licence.
    func checkProtection(_ presentation: DASHPresentation, keys: [DASHPresentation.Key]) throws(HLSDownloadError) {
        guard !options.keepEncrypted else { return }
        for key in keys {
            for period in presentation.mpd.periods.indices {
                guard let (set, position) = presentation.locate(key, inPeriod: period) else { continue }
                let adaptationSet = presentation.mpd.periods[period].adaptationSets[set]
                let protections =
                    adaptationSet.contentProtection + adaptationSet.representations[position].contentProtection
                guard let first = protections.first else { continue }
                let schemes = Set(protections.map(\.schemeIdUri)).sorted().joined(separator: ", ")
                throw HLSDownloadError(
                    .unsupportedEncryption, url: presentation.mpdURL,
                    detail: "Representation \(adaptationSet.representations[position].id) is encrypted "
                        + "(ContentProtection \(schemes)\(first.value.map { ", \($0)" } ?? "")); StreamKit does not "
                        + "decrypt DRM. Pass --keep-encrypted to download it as it is")
            }
        }
    }

    /// `key`'s media playlist, fetching the `sidx` boxes of SegmentBase Representations.
    func dashMediaPlaylist(
        _ presentation: DASHPresentation, key: DASHPresentation.Key
    ) async throws(HLSDownloadError) -> MediaPlaylist {
        let url = presentation.url(of: key)
        func refused(_ error: SegmentResolutionError) -> HLSDownloadError {
            HLSDownloadError(
                error.kind == .tooManySegments ? .tooManySegments : .invalidPlaylist, url: url,
                detail: "Representation \(key): \(error.reason)"
                    + (error.kind == .tooManySegments ? " (raise the limit with --max-segments)" : ""))
        }
        var indexes: [String: SegmentIndex] = [:]
        let requests: [DASHSegment]
        do {
            requests = try presentation.indexRequests(for: key, maximumSegments: options.maximumSegments)
        } catch {
            throw refused(error)
        }
        for request in requests { indexes[request.identity] = try await fetchIndex(request) }
        let now = await serverNow(presentation)
        var playlist: MediaPlaylist
        do {
            // The server's clock places a live `@duration` template's window.
            playlist = try presentation.mediaPlaylist(
                for: key, indexes: indexes, maximumSegments: options.maximumSegments, now: now)
        } catch {
            throw refused(error)
        }
        if presentation.mpd.type == .dynamic {
            // Numbered by time from one load to the next, the first included.
            playlist = state.withLock { state in
                let (numbered, mark) = DASHLiveNumbering.continuing(playlist, after: state.dashMarks[key])
                state.dashMarks[key] = mark
                return numbered
            }
        }
        try checkLimits(playlist, url: url)
        return playlist
    }

    /// Now, in seconds since 1970, on the server's clock: ours, plus for a dynamic MPD the offset
    /// from the first of its UTCTiming sources that answers (read once per download: a
    /// `direct` time, a GET of an ISO 8601 time, or a HEAD's `Date`, taken at the middle of the
    /// exchange). Ours as it is when the MPD lists none or none answers.
    func serverNow(_ presentation: DASHPresentation) async -> Double {
        guard presentation.mpd.type == .dynamic else { return Date().timeIntervalSince1970 }
        if let offset = state.withLock({ $0.dashClockOffset }) { return Date().timeIntervalSince1970 + offset }
        var offset = 0.0
        for source in presentation.mpd.utcTimingSources(mpdURL: presentation.mpdURL) {
            if let measured = await clockOffset(from: source) {
                offset = measured
                break
            }
        }
        state.withLock { $0.dashClockOffset = offset }
        return Date().timeIntervalSince1970 + offset
    }

    /// How far the server's clock is ahead of ours, by `source`; `nil` when it does not answer
    /// with a time. The task's headers are not sent: a time server is usually another host.
    private func clockOffset(from source: UTCTimingSource) async -> Double? {
        let sent = Date().timeIntervalSince1970
        let request: HTTPClientRequest
        switch source {
        case .direct(let time):
            return time.timeIntervalSince1970 - sent
        case .httpDateTime(let url):
            request = HTTPClientRequest(url: url)
        case .httpHead(let url):
            request = HTTPClientRequest(url: url, method: .head)
        }
        guard RenditionPlanner.isFetchable(request.url),
            let (head, body) = try? await client.data(for: request, limit: 4096, retry: options.retry),
            head.status.isSuccess
        else { return nil }
        let middle = (sent + Date().timeIntervalSince1970) / 2
        if case .httpHead = source {
            return head.headers["Date"].flatMap(HTTPDate.parse).map { $0.timeIntervalSince1970 - middle }
        }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return HLSDateTime(text).map { $0.timeIntervalSince1970 - middle }
    }

    /// Fetches and parses the `sidx` box at `request` (a Range request).
    private func fetchIndex(_ request: DASHSegment) async throws(HLSDownloadError) -> SegmentIndex {
        guard let range = request.range, range.last >= range.first, range.last - range.first < 16 << 20 else {
            throw HLSDownloadError(
                .invalidPlaylist, url: request.url, detail: "the indexRange \(request.range?.text ?? "") is not usable")
        }
        guard RenditionPlanner.isFetchable(request.url) else {
            throw HLSDownloadError(
                .unsupportedURI, url: request.url, detail: "the index is not an http or https URL; it is not fetched")
        }
        var fetch = HTTPClientRequest(url: request.url, headers: options.headers)
        fetch.range = .closed(first: range.first, last: range.last)
        let head: HTTPClientResponseHead
        var body: [UInt8]
        do {
            (head, body) = try await client.data(
                for: fetch, limit: 32 << 20, retry: options.retry)
        } catch let error as HTTPClientError {
            if error.kind == .cancelled || Task.isCancelled { throw .cancelled }
            throw HLSDownloadError(.playlistUnavailable, url: request.url, detail: error.description, underlying: error)
        } catch {
            throw .cancelled
        }
        guard head.status.isSuccess else {
            throw HLSDownloadError(.playlistUnavailable, url: head.url, status: head.status)
        }
        switch head.rangeOutcome {
        case .partial:
            // The client checked Content-Range against the request; the body must be all of it.
            guard Int64(body.count) == range.last - range.first + 1 else {
                throw HLSDownloadError(
                    .invalidPlaylist, url: head.url,
                    detail: "the server sent \(body.count) bytes of the \(range.last - range.first + 1)-byte indexRange"
                )
            }
        case .ignored:
            // The server sent the whole file: take the range from it.
            guard Int64(body.count) > range.last else {
                throw HLSDownloadError(.invalidPlaylist, url: head.url, detail: "the file ends before its indexRange")
            }
            body = Array(body[Int(range.first)...Int(range.last)])
        default:
            throw HLSDownloadError(
                .invalidPlaylist, url: head.url, status: head.status, detail: "no indexRange in the response")
        }
        // Kept for the package's copy of the file (``writeDASHIndexes()``).
        state.withLock { [body] in $0.dashIndexBytes[request.url] = (range.first, body) }
        do {
            return try SegmentIndex.parse(body, fileOffset: range.first, maximumReferences: options.maximumSegments)
        } catch {
            throw HLSDownloadError(
                error.kind == .tooManySegments ? .tooManySegments : .invalidPlaylist, url: head.url,
                detail: "the sidx box: \(error.reason)"
                    + (error.kind == .tooManySegments ? " (raise the limit with --max-segments)" : ""))
        }
    }

    /// Keeps the source MPD in the package (for resuming, and for the package's MPD).
    func saveSourceMPD(_ bytes: [UInt8]) throws(HLSDownloadError) {
        try PackageStore.writeAtomically(Data(bytes), to: URL(fileURLWithPath: path(Self.sourceMPDPath)))
    }

    /// The presentation kept by ``saveSourceMPD(_:)``.
    func restoreDASH(mpdURL: String) async throws(HLSDownloadError) -> DASHPresentation {
        guard let data = FileManager.default.contents(atPath: path(Self.sourceMPDPath)) else {
            throw HLSDownloadError(.packageConflict, detail: "cannot read \(path(Self.sourceMPDPath))")
        }
        return DASHPresentation(mpd: try await parseMPD(Array(data), url: mpdURL), mpdURL: mpdURL)
    }

    /// A live MPD's reload: the MPD fetched again (``sharedMPD(_:)``), and `key`'s media
    /// playlist from it.
    func reloadDASH(_ url: String, key: DASHPresentation.Key) async throws(HLSDownloadError) -> MediaPlaylist {
        let mpdURL = url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url
        return try await dashMediaPlaylist(try await sharedMPD(mpdURL), key: key)
    }

    /// The MPD fetched again, once for all the renditions that ask within half a second: each
    /// rendition reloads on the target duration's cadence, so they ask together, and one fetch
    /// serves them all (a fetch under way is joined).
    private func sharedMPD(_ mpdURL: String) async throws(HLSDownloadError) -> DASHPresentation {
        let fetch = state.withLock { state in
            if let last = state.dashReload, last.started.duration(to: .now) < .milliseconds(500) {
                return last.fetch
            }
            let fetch = Task { () async throws -> DASHPresentation in
                let (bytes, finalURL) = try await self.fetchPlaylist(mpdURL, accepting: .mpd)
                let presentation = DASHPresentation(
                    mpd: try await self.parseMPD(bytes, url: finalURL), mpdURL: finalURL)
                try self.saveSourceMPD(bytes)
                self.state.withLock { $0.dash = presentation }
                return presentation
            }
            state.dashReload = (.now, fetch)
            return fetch
        }
        do {
            return try await withTaskCancellationHandler {
                try await fetch.value
            } onCancel: {
                fetch.cancel()
            }
        } catch let error as HLSDownloadError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Puts each SegmentBase's `sidx` box (fetched to find its segments, not a segment itself)
    /// back into the package's copy of the file, between the init section and the first
    /// fragment: without it the copy has a hole there, which no player reads past, and with it
    /// the copy is the source's file (less what follows its last fragment), playable alone.
    func writeDASHIndexes() throws(HLSDownloadError) {
        let writes: [(file: String, offset: Int64, bytes: [UInt8])] = state.withLock { state in
            var seen = Set<String>()
            var writes: [(file: String, offset: Int64, bytes: [UInt8])] = []
            for rendition in state.renditions {
                for segment in rendition.segments {
                    guard let url = segment.resolved.map?.uri, let file = segment.mapFile,
                        let index = state.dashIndexBytes[url], seen.insert(file).inserted
                    else { continue }
                    writes.append((file, index.offset, index.bytes))
                }
            }
            return writes
        }
        for write in writes {
            let file = path(write.file)
            // Only into a file that reaches past the index: its fragments are there.
            var status = stat()
            guard stat(file, &status) == 0, Int64(status.st_size) >= write.offset + Int64(write.bytes.count) else {
                continue
            }
            let descriptor = open(file, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw HLSDownloadError(writeFailed: SystemError.current("open", subject: file), path: file)
            }
            defer { close(descriptor) }
            let failure = write.bytes.withUnsafeBytes { buffer -> PositionalWrite.Failure? in
                do throws(PositionalWrite.Failure) {
                    try PositionalWrite.write(buffer, to: descriptor, at: write.offset, subject: file)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw HLSDownloadError(writeFailed: failure.error, path: file) }
        }
    }

    /// Writes the package's MPD over its files, when the source was one.
    func writePackageMPD() throws(HLSDownloadError) {
        // Copied out of the lock, composed outside it.
        let snapshot = state.withLock { state in
            state.dash.map { ($0.mpd, state.renditions.map { ($0.selected.folder, $0.segments) }) }
        }
        guard let (source, renditions) = snapshot else { return }
        let composed = DASHPackageComposer.compose(source: source, renditions: renditions).serialized()
        try PackageStore.writeAtomically(
            Data(composed.utf8), to: URL(fileURLWithPath: path(PackageLayout.mpdName)))
    }
}
