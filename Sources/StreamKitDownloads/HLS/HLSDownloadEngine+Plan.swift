import StreamKitHLS

// Planning: segments into package files and recorded segments, in the engine's state.
extension HLSDownloadEngine {
    /// Plans `entries` for rendition `index`, adding files and recorded segments.
    func plan(
        _ entries: [(segment: MediaSegment, resolved: ResolvedSegment)], rendition index: Int, playlistURL: String,
        in state: inout EngineState
    ) throws(HLSDownloadError) {
        try plan(rendition: index, playlistURL: playlistURL, in: &state) { (add) throws(HLSDownloadError) in
            for entry in entries { try add(entry.segment, entry.resolved) }
        }
    }

    /// Plans for rendition `index` the segments `feed` hands to the function it is given, in
    /// playlist order, adding files and recorded segments.
    func plan(
        rendition index: Int, playlistURL: String, in state: inout EngineState,
        _ feed: (_ add: (MediaSegment, ResolvedSegment) throws(HLSDownloadError) -> Void) throws(HLSDownloadError) ->
            Void
    ) throws(HLSDownloadError) {
        let filter = state.filter
        let live = state.live
        var planning = RenditionPlanning()
        var lastSequence: UInt64?
        // In place: a copy of the planner (its names of every file planned) at every live reload
        // would be copied again on its first change. A plan that throws fails the download.
        try feed { (segment, resolved) throws(HLSDownloadError) in
            let exclusion = filter.exclusion(
                uri: RenditionPlanner.normalized(resolved).uri, start: resolved.startTime,
                duration: resolved.duration, live: live)
            try state.renditions[index].planner.add(
                segment, resolved, exclusion: exclusion, to: &planning, playlistURL: playlistURL)
            lastSequence = resolved.mediaSequence
        }
        state.renditions[index].planner.finish(&planning)
        state.books.filesPlanned(planning.keyFiles)
        state.books.filesPlanned(taking: planning.files)
        planning.files = []
        state.renditions[index].recordedDuration += planning.segments.reduce(0) {
            $0 + ($1.excluded == nil ? $1.segment.duration : 0)
        }
        state.renditions[index].segments += planning.segments
        if let lastSequence { state.renditions[index].lastSourceSequence = lastSequence }
    }
}
