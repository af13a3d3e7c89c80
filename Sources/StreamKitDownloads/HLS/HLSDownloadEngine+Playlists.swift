import Foundation
import StreamKitCore
import StreamKitDASH
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

extension HLSDownloadEngine {
    /// Fetches a playlist, retrying per the job's policy.
    ///
    /// - Returns: Its bytes and its URL after redirects.
    /// - Throws: `playlistUnavailable` (naming the URL and status), `invalidPlaylist` when the body
    ///   is not an HLS playlist or is too large, `cancelled`.
    func fetchPlaylist(
        _ url: String, accepting format: SourceFormat = .playlist
    ) async throws(HLSDownloadError) -> (bytes: [UInt8], url: String) {
        let limit = options.maximumPlaylistBytes
        let (head, body) = try await fetchWhole(
            url, limit: limit,
            tooLarge: {
                HLSDownloadError(
                    .invalidPlaylist, url: url, detail: "the playlist is larger than \(limit) bytes", underlying: $0)
            },
            failed: {
                HLSDownloadError(.playlistUnavailable, url: $0.url ?? url, detail: $0.description, underlying: $0)
            })
        guard head.status.isSuccess else {
            throw HLSDownloadError(.playlistUnavailable, url: head.url, status: head.status)
        }
        switch format {
        case .playlist where !Self.looksLikePlaylist(body):
            throw HLSDownloadError(
                .invalidPlaylist, url: head.url, detail: "the response is not an HLS playlist (no #EXTM3U)")
        case .playlistOrMPD where !Self.looksLikePlaylist(body) && !MPD.looksLikeMPD(body):
            throw HLSDownloadError(
                .invalidPlaylist, url: head.url,
                detail: "the response is neither an HLS playlist (no #EXTM3U) nor a DASH MPD (no <MPD>)")
        case .mpd where !MPD.looksLikeMPD(body):
            throw HLSDownloadError(.invalidPlaylist, url: head.url, detail: "the response is not a DASH MPD (no <MPD>)")
        default:
            return (body, head.url)
        }
    }

    /// What ``fetchPlaylist(_:accepting:)`` takes.
    enum SourceFormat {
        case playlist, playlistOrMPD, mpd
    }

    /// Fetches a small file whole (a playlist, a key), retrying per the job's policy: a body over
    /// `limit` fails with what `tooLarge` makes of the error, any other failure with `failed`'s.
    private func fetchWhole(
        _ url: String, limit: Int, tooLarge: (HTTPClientError) -> HLSDownloadError,
        failed: (HTTPClientError) -> HLSDownloadError
    ) async throws(HLSDownloadError) -> (head: HTTPClientResponseHead, body: [UInt8]) {
        do {
            return try await client.data(
                for: HTTPClientRequest(url: url, headers: options.headers), limit: limit, retry: options.retry)
        } catch let error as HTTPClientError {
            if error.kind == .cancelled || Task.isCancelled { throw .cancelled }
            throw error.kind == .bodyTooLarge ? tooLarge(error) : failed(error)
        } catch {
            // `data` throws only HTTPClientError; anything else is the task's cancellation.
            throw .cancelled
        }
    }

    /// Whether `bytes` look like an HLS playlist: `#EXTM3U` on a line of its own within the first
    /// 4 KB, after at most a byte order mark, blank lines and comment lines (which the lenient parser
    /// also tolerates).
    static func looksLikePlaylist(_ bytes: [UInt8]) -> Bool {
        var lines = bytes.prefix(4096).split(separator: 0x0A, omittingEmptySubsequences: false)[...]
        if var first = lines.first, first.starts(with: [0xEF, 0xBB, 0xBF]) {
            first = first.dropFirst(3)
            lines[lines.startIndex] = first
        }
        for line in lines {
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            if trimmed.starts(with: Array("#EXTM3U".utf8)) { return true }
            if !(trimmed.isEmpty || trimmed.first == UInt8(ascii: "#")) { return false }
        }
        return false
    }

    /// Parses a fetched playlist (lenient unless `--strict`), reporting its warnings once; a large one off the
    /// cooperative pool.
    func parse(
        _ bytes: [UInt8], url: String, importedVariables: [String: String]
    ) async throws(HLSDownloadError) -> ParsedPlaylist {
        let options = PlaylistParseOptions(
            strictness: self.options.strictPlaylists ? .strict : .lenient, playlistURL: URL(string: url),
            importedVariables: importedVariables)
        let parse = { @Sendable () -> Result<ParsedPlaylist, PlaylistError> in
            Result { () throws(PlaylistError) -> ParsedPlaylist in try Playlist.parse(bytes, options: options) }
        }
        let outcome = bytes.count < 256 << 10 ? parse() : await offCooperativePool(parse)
        switch outcome {
        case .success(let parsed):
            if !parsed.warnings.isEmpty && state.withLock({ $0.warnedPlaylists.insert(url).inserted }) {
                events.yield(.playlistWarnings(url: url, warnings: parsed.warnings))
            }
            return parsed
        case .failure(let error): throw HLSDownloadError(.invalidPlaylist, url: url, detail: Self.describe(error))
        }
    }

    /// The violations of a playlist refused, one a line (at most 20) after the first.
    static func describe(_ error: PlaylistError) -> String {
        let shown = error.diagnostics.prefix(20).map(\.description)
        let more = error.diagnostics.count - shown.count
        return shown.joined(separator: "\n  ") + (more > 0 ? "\n  (and \(more) more)" : "")
    }

    /// Fetches and parses a media playlist, checking the segment limit.
    func fetchMediaPlaylist(
        _ url: String, variables: [String: String]
    ) async throws(HLSDownloadError) -> (playlist: MediaPlaylist, url: String) {
        if let key = DASHPresentation.Key(url: url), state.withLock({ $0.dash != nil }) {
            return (try await reloadDASH(url, key: key), url)
        }
        let (bytes, finalURL) = try await fetchPlaylist(url)
        let parsed = try await parse(bytes, url: finalURL, importedVariables: variables)
        guard case .media(let media) = parsed.playlist else {
            throw HLSDownloadError(
                .invalidPlaylist, url: finalURL, detail: "a multivariant playlist where a media playlist was expected")
        }
        try checkLimits(media, url: finalURL)
        return (media, finalURL)
    }

    /// Refuses a media playlist listing more segments than the job allows.
    func checkLimits(_ media: MediaPlaylist, url finalURL: String) throws(HLSDownloadError) {
        guard media.segments.count <= options.maximumSegments else {
            throw HLSDownloadError(
                .tooManySegments, url: finalURL,
                detail: "the playlist lists \(media.segments.count) segments, more than the limit of "
                    + "\(options.maximumSegments) (raise it with --max-segments)")
        }
    }

    /// Fetches several media playlists at once, in order.
    func fetchMediaPlaylists(
        _ urls: [String], variables: [String: String]
    ) async throws(HLSDownloadError) -> [(playlist: MediaPlaylist, url: String)] {
        do {
            return try await withThrowingTaskGroup(of: (Int, MediaPlaylist, String).self) { group in
                for (index, url) in urls.enumerated() {
                    group.addTask {
                        let (playlist, finalURL) = try await self.fetchMediaPlaylist(url, variables: variables)
                        return (index, playlist, finalURL)
                    }
                }
                var results: [(playlist: MediaPlaylist, url: String)?] = Array(repeating: nil, count: urls.count)
                for try await (index, playlist, url) in group { results[index] = (playlist, url) }
                return results.map { $0! }
            }
        } catch let error as HLSDownloadError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Fetches (or reads back) every key file, checking each is 16 bytes: up to
    /// ``HLSDownloadOptions/connections`` at once (a playlist rotating its key every segment lists
    /// hundreds). A key that cannot be fetched fails the download, `--skip-broken` or not: no
    /// segment under it could be played.
    /// `candidates`: the files to look among (a live reload's new files), every file when `nil`.
    func fetchPendingKeys(among candidates: [Int]? = nil) async throws(HLSDownloadError) {
        let keyFiles = state.withLock { state in
            let books = state.books
            return (candidates ?? Array(books.files.indices)).filter { books.files[$0].kind == .key }.map {
                ($0, books.files[$0], books.states[$0])
            }
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var running = 0
                for (index, file, fileState) in keyFiles {
                    if running == options.connections {
                        try await group.next()
                        running -= 1
                    }
                    group.addTask { try await self.fetchKey(index, file, fileState) }
                    running += 1
                }
                try await group.waitForAll()
            }
        } catch let error as HLSDownloadError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Fetches (or reads back) one key file; one the user gave a key for is never fetched.
    private func fetchKey(_ index: Int, _ file: PlannedFile, _ fileState: FileState) async throws(HLSDownloadError) {
        if state.withLock({ $0.keys[file.path] != nil }) { return }
        if let given = userKey(for: file) { return try placeUserKey(given, index, file) }
        let finalPath = path(file.path)
        if fileState.isDone, let data = FileManager.default.contents(atPath: finalPath), data.count == 16 {
            state.withLock { $0.keys[file.path] = Array(data) }
            return
        }
        let bytes: [UInt8]
        if let inline = PackageFiles.dataURIBytes(file.url) {
            bytes = inline
        } else {
            let (head, body) = try await fetchWhole(
                file.url, limit: 4096,
                tooLarge: { _ in
                    HLSDownloadError(
                        .invalidKey, url: file.url, path: file.path,
                        detail: "the key is larger than 4096 bytes; AES-128 keys are 16 bytes")
                },
                failed: {
                    HLSDownloadError(
                        .fileFailed, url: $0.url ?? file.url, path: file.path, detail: $0.description, underlying: $0)
                })
            guard head.status.isSuccess else {
                throw HLSDownloadError(
                    .fileFailed, url: head.url, status: head.status, path: file.path,
                    detail: "the key could not be fetched")
            }
            bytes = body
        }
        guard bytes.count == 16 else {
            throw HLSDownloadError(
                .invalidKey, url: file.url, path: file.path,
                detail: "the key is \(bytes.count) bytes; AES-128 keys are 16 bytes")
        }
        try PackageStore.writeAtomically(Data(bytes), to: URL(fileURLWithPath: finalPath))
        state.withLock { state in
            state.keys[file.path] = bytes
            state.books.keyFetched(index)
        }
    }
}
