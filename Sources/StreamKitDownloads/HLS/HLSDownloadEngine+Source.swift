import Foundation
import StreamKitCore
import StreamKitHLS
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a live rendition's recorded source file holds, so that a reload appends its new segments
/// instead of writing the whole file again (a day of two-second segments is 43,200 of them).
struct RecordedSourceFile: Sendable {
    /// Recorded segments in the file.
    var segmentCount: Int
    /// The header the file was written with, and the version and target duration it states.
    var header: MediaPlaylistHeader
    var version: Int
    var targetDuration: Int
}

extension HLSDownloadEngine {
    /// Writes the recorded source playlist of a rendition (absolute URIs) for resuming.
    ///
    /// For a live recording whose file holds every segment but the new ones, under the same header,
    /// the new segments are appended with one write, followed by the source sequence number of the
    /// last one; otherwise (the first write, a header that changed, a segment longer than the
    /// stated target duration, a rendition no longer recording) the file is written whole,
    /// atomically. While the rendition records, its file has no EXT-X-ENDLIST, so that appended
    /// segments read as part of it; once it ended, the file is VOD again.
    func saveSource(of index: Int) throws(HLSDownloadError) {
        enum Write {
            /// The rendition's segments as they stand, composed after the lock is released.
            case whole(ChunkedArray<RecordedSegment>)
            case append([MediaSegment])
        }
        let (folder, write, count, last, header, recording) = state.withLock { state in
            let rendition = state.renditions[index]
            let count = rendition.segments.count
            let write: Write
            if state.live, !rendition.ended, let written = rendition.sourceFile, written.header == rendition.header,
                written.segmentCount >= 1, written.segmentCount <= count
            {
                // The last segment written is composed again with the new ones: the keys and map
                // in effect carry over, and only changes are written.
                let tail = PlaylistComposer.compose(
                    rendition.segments[(written.segmentCount - 1)...], header: rendition.header, target: .source)
                if (tail.version ?? 3) <= written.version, (tail.targetDuration ?? 0) <= written.targetDuration {
                    write = .append(Array(tail.segments.dropFirst()))
                } else {
                    write = .whole(rendition.segments)
                }
            } else {
                write = .whole(rendition.segments)
            }
            let recording = state.live && !rendition.ended
            return (rendition.selected.folder, write, count, rendition.lastSourceSequence, rendition.header, recording)
        }
        let path = sourcePath(of: folder)
        // The source's own sequence number of the last segment taken, in the same write as the
        // segments: package.json, written a moment later, would be behind after a kill in
        // between, and a resumed recording would take the newest segments again.
        let marker = last.map { Self.lastSourceSequencePrefix + "\($0)\n" } ?? ""
        switch write {
        case .append(let segments):
            let text = MediaPlaylist.serializedSegments(segments) + marker
            try PackageStore.append(Array(text.utf8), to: path)
            state.withLock { $0.renditions[index].sourceFile?.segmentCount = count }
        case .whole(let segments):
            // Composed twice, its entries never held: once for the header, once as it is written.
            func compose(_ each: (MediaSegment) -> Void) -> MediaPlaylist {
                PlaylistComposer.frame(segments, header: header, target: .source, each: each)
            }
            var frame = compose { _ in }
            if recording {
                frame.hasEndList = false
                frame.playlistType = nil
            }
            try PackageStore.writeAtomically(
                frame, segments: { each in _ = compose(each) }, to: URL(fileURLWithPath: path),
                then: Array(marker.utf8))
            let written = RecordedSourceFile(
                segmentCount: count, header: header, version: frame.version ?? 3,
                targetDuration: frame.targetDuration ?? 0)
            state.withLock { $0.renditions[index].sourceFile = recording ? written : nil }
        }
    }

    /// A comment line (for HLS) of the recorded source playlist: the source's media sequence
    /// number of the last segment taken.
    static let lastSourceSequencePrefix = "#STREAMKIT-LAST-SOURCE-SEQUENCE:"

    /// A recorded source playlist as written, read back: the playlist up to the last
    /// sequence-number line (what follows it is the tail of an append a kill cut short), without
    /// those lines (comments that the parser would keep with the segments), and the number the
    /// last one gives. A file with no such line is taken whole.
    static func recordedSource(_ data: Data) -> (playlist: Data, lastSourceSequence: UInt64?) {
        let prefix = Array(lastSourceSequencePrefix.utf8)
        var kept = Data()
        kept.reserveCapacity(data.count)
        var pending = Data()
        var last: UInt64?
        var found = false
        for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
            if line.starts(with: prefix) {
                last = UInt64(String(decoding: line.dropFirst(prefix.count), as: UTF8.self)) ?? last
                found = true
                kept.append(pending)
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(line)
                pending.append(0x0A)
            }
        }
        if !found { return (data, nil) }
        return (kept, last)
    }
}
