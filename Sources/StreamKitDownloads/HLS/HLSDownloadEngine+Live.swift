import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import Synchronization

extension HLSDownloadEngine {
    /// Reloads every live rendition until EXT-X-ENDLIST, the duration limit, a stall, or
    /// ``HLSDownload/finishRecording()``; then finishes the work queue (dropping what was not
    /// started when the recording was stopped by request).
    func record() async throws(HLSDownloadError) {
        let renditions = state.withLock { state in state.renditions.indices.filter { !state.renditions[$0].ended } }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in renditions {
                    group.addTask { try await self.record(rendition: index) }
                }
                try await group.waitForAll()
            }
        } catch let error as HLSDownloadError {
            throw error
        } catch {
            throw .cancelled
        }
        queue.finish(dropPending: control.stopRequested)
    }

    private func record(rendition index: Int) async throws(HLSDownloadError) {
        let limit = liveLimit
        let (url, folder) = state.withLock {
            ($0.renditions[index].selected.playlistURL, $0.renditions[index].selected.folder)
        }
        var changed = true
        var lastChange = ContinuousClock.now
        while !control.stopRequested {
            let target = Double(state.withLock { $0.renditions[index].header.targetDuration } ?? 2)
            // RFC 8216bis §6.3.4: reload after the target duration, or half of it when nothing
            // changed; never longer than the wait after which a silent stream is taken as ended.
            let wait = min(max(0.25, changed ? target : target / 2), options.liveStallTimeout.secondsValue)
            do {
                try await control.sleep(.milliseconds(Int64(saturating: wait * 1000)))
            } catch {
                throw .cancelled
            }
            if control.stopRequested { break }
            let reloaded: (playlist: MediaPlaylist, url: String)
            do {
                reloaded = try await fetchMediaPlaylist(url, variables: [:])
            } catch {
                if error.kind == .cancelled { throw error }
                logger.warning("reloading \(url): \(error)")
                if lastChange.duration(to: .now) > options.liveStallTimeout { break }
                changed = false
                continue
            }
            let media = reloaded.playlist
            let (last, recorded) = state.withLock {
                ($0.renditions[index].lastSourceSequence, $0.renditions[index].recordedDuration)
            }
            let window = LiveWindow.take(
                Array(zip(media.segments, media.resolvedSegments(baseURL: reloaded.url))), after: last,
                recordedDuration: recorded, limit: limit)
            changed = !window.entries.isEmpty
            if changed {
                lastChange = .now
                try await append(window.entries, rendition: index, playlist: media, url: reloaded.url)
                events.yield(
                    .recorded(
                        rendition: folder, newSegments: window.entries.count,
                        recordedSeconds: state.withLock { $0.renditions[index].recordedDuration }))
            }
            if !media.isLive || window.reachedLimit { break }
            if lastChange.duration(to: .now) > options.liveStallTimeout {
                logger.warning("\(url) gained no segment for \(options.liveStallTimeout); taking it as ended")
                break
            }
        }
        state.withLock { state in
            state.renditions[index].ended = true
            state.books.planChanged()
        }
    }

    /// Adds reloaded segments to a rendition: plans them, saves the recorded source, fetches new
    /// keys, and queues the new files.
    private func append(
        _ entries: [(segment: MediaSegment, resolved: ResolvedSegment)], rendition index: Int,
        playlist: MediaPlaylist, url: String
    ) async throws(HLSDownloadError) {
        let newFiles = try state.withLock { (state) throws(HLSDownloadError) -> [Int] in
            state.renditions[index].header.merge(playlist)
            let before = state.books.files.count
            try plan(entries, rendition: index, playlistURL: url, in: &state)
            state.books.planChanged()
            return Array(before..<state.books.files.count)
        }
        try saveSource(of: index)
        // Only the new files can hold a key not yet fetched: looking among all of them at every
        // reload would cost a day's recording as much as its square.
        try await fetchPendingKeys(among: newFiles)
        let items = state.withLock { $0.books.pendingItems(files: newFiles) }
        queue.enqueue(items)
    }
}
