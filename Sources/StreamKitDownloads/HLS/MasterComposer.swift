import StreamKitHLS

/// Writes the package's `index.m3u8`: always a multivariant playlist (RFC 8216bis §4.4.6) listing
/// only what was downloaded, with relative URIs.
///
/// From a multivariant source it keeps the chosen variant's attributes (BANDWIDTH, CODECS,
/// RESOLUTION, ...) and, in each of its rendition groups, the renditions that were downloaded plus
/// those without a URI (audio muxed into the variant, closed captions); groups left empty are
/// dropped from the variant, and a group keeps one DEFAULT=YES rendition. I-frame playlists,
/// session keys, session data with URIs, content steering and variable definitions are dropped.
/// From a media playlist source it lists that playlist as the only variant, with BANDWIDTH (the
/// peak) and AVERAGE-BANDWIDTH measured on the downloaded segments.
enum MasterComposer {
    /// The bitrates measured on downloaded segments, in bits a second.
    struct MeasuredBandwidth: Hashable, Sendable {
        var peak: Int
        var average: Int
    }

    static func compose(
        master: MultivariantPlaylist?, masterURL: String?, variant: VariantStream?, renditions: [SelectedRendition],
        measured: MeasuredBandwidth?
    ) -> MultivariantPlaylist {
        let main = renditions.first { $0.role == .main || $0.role == .mainAudioOnly }
        let mainURI = (main?.folder ?? "video") + "/" + PackageLayout.mediaPlaylistName
        guard let master, let masterURL, var variant else {
            let bandwidth = max(measured?.peak ?? 1, 1)
            return MultivariantPlaylist(
                independentSegments: false,
                variants: [
                    VariantStream(
                        uri: mainURI, bandwidth: bandwidth,
                        averageBandwidth: measured.map { max($0.average, 1) })
                ])
        }
        let folders = Dictionary(
            renditions.filter { $0.role == .audio || $0.role == .subtitles }.map { ($0.playlistURL, $0.folder) },
            uniquingKeysWith: { first, _ in first })
        var kept: [Rendition] = []
        var remainingGroups: Set<String> = []
        for type in RenditionType.allCases {
            var group: [Rendition] = []
            for var rendition in master.renditions(of: type, for: variant) {
                if let uri = rendition.uri {
                    guard type == .audio || type == .subtitles,
                        let folder = folders[resolveURI(uri, against: masterURL)]
                    else { continue }
                    rendition.uri = folder + "/" + PackageLayout.mediaPlaylistName
                }
                group.append(rendition)
            }
            if type == .audio, !group.isEmpty, !group.contains(where: \.isDefault) {
                group[0].isDefault = true
                group[0].autoselect = true
            }
            if let first = group.first { remainingGroups.insert("\(type.rawValue)/\(first.groupID)") }
            kept += group
        }
        if let group = variant.audio, !remainingGroups.contains("AUDIO/\(group)") { variant.audio = nil }
        if let group = variant.video, !remainingGroups.contains("VIDEO/\(group)") { variant.video = nil }
        if let group = variant.subtitles, !remainingGroups.contains("SUBTITLES/\(group)") { variant.subtitles = nil }
        if case .group(let group) = variant.closedCaptions, !remainingGroups.contains("CLOSED-CAPTIONS/\(group)") {
            variant.closedCaptions = nil
        }
        variant.uri = mainURI
        variant.pathwayID = nil
        return MultivariantPlaylist(
            version: master.version, independentSegments: master.independentSegments, start: master.start,
            renditions: kept, variants: [variant],
            sessionData: master.sessionData.filter { $0.uri == nil })
    }
}
