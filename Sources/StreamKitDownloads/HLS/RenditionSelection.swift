import StreamKitHLS

/// A media playlist chosen for the package, and the folder it goes in.
struct SelectedRendition: Hashable, Sendable, Codable {
    /// What it is.
    var role: RenditionRole
    /// Its folder in the package.
    var folder: String
    /// The remote media playlist, absolute.
    var playlistURL: String
    /// EXT-X-MEDIA GROUP-ID, for alternative renditions.
    var groupID: String?
    /// EXT-X-MEDIA NAME, for alternative renditions.
    var name: String?
    /// EXT-X-MEDIA LANGUAGE, for alternative renditions.
    var language: String?
    /// Bits a second from the variant (AVERAGE-BANDWIDTH, else BANDWIDTH), for the main rendition.
    var bandwidth: Int?
}

/// The variant and renditions a selection takes from a multivariant playlist. Pure.
struct RenditionSelector {
    /// What was chosen.
    struct Choice: Sendable {
        /// The variant stream.
        var variant: VariantStream
        /// Its media playlist first, then audio renditions, then subtitles.
        var renditions: [SelectedRendition]
    }

    /// Chooses by `selection` from `master`, whose URIs resolve against `masterURL`.
    ///
    /// - Throws: ``HLSDownloadError`` `noMatchingVariant` or `noMatchingRendition`, naming what exists.
    static func choose(
        from master: MultivariantPlaylist, masterURL: String, selection: HLSSelection
    ) throws(HLSDownloadError) -> Choice {
        guard let variant = master.selectVariant(selection.variant, codecs: selection.codecs) else {
            let available = master.variants.map { variant in
                "\(variant.bandwidth)" + (variant.resolution.map { " \($0)" } ?? "")
                    + (variant.codecs.map { " \($0)" } ?? "")
            }
            let wanted =
                "'\(selection.variant)'"
                + (selection.codecs.isEmpty ? "" : " with codec " + selection.codecs.joined(separator: " or "))
            throw HLSDownloadError(
                .noMatchingVariant, url: masterURL,
                detail: master.variants.isEmpty
                    ? "the playlist lists no variant stream"
                    : "no variant fits \(wanted); variants: \(available.joined(separator: ", "))")
        }
        var renditions: [SelectedRendition] = []
        var taken: Set<String> = []
        let mainURL = resolveURI(variant.uri, against: masterURL)
        let mainRole: RenditionRole = variant.isAudioOnly ? .mainAudioOnly : .main
        let mainFolder = PackageLayout.renditionFolder(role: mainRole, label: nil, taken: taken)
        taken.insert(mainFolder)
        renditions.append(
            SelectedRendition(
                role: mainRole, folder: mainFolder, playlistURL: mainURL,
                bandwidth: variant.averageBandwidth ?? variant.bandwidth))
        var playlistURLs: Set<String> = [mainURL]

        func take(
            _ type: RenditionType, role: RenditionRole, preference: RenditionPreference, option: String
        )
            throws(HLSDownloadError)
        {
            let group = master.renditions(of: type, for: variant)
            let withPlaylists = group.filter { $0.uri != nil }
            let chosen = preference.select(from: withPlaylists)
            if chosen.isEmpty, case .language = preference {
                throw noMatch(option: option, preference: preference, group: withPlaylists, masterURL: masterURL)
            }
            if chosen.isEmpty, case .name = preference {
                throw noMatch(option: option, preference: preference, group: withPlaylists, masterURL: masterURL)
            }
            if chosen.isEmpty, case .role = preference {
                throw noMatch(option: option, preference: preference, group: withPlaylists, masterURL: masterURL)
            }
            if case .languages(let languages) = preference,
                let missing = languages.first(where: {
                    RenditionPreference.language($0).select(from: withPlaylists).isEmpty
                })
            {
                throw noMatch(
                    option: option, preference: .language(missing), group: withPlaylists, masterURL: masterURL)
            }
            for rendition in chosen {
                guard let uri = rendition.uri else { continue }
                let url = resolveURI(uri, against: masterURL)
                guard playlistURLs.insert(url).inserted else { continue }
                let folder = PackageLayout.renditionFolder(
                    role: role, label: rendition.language ?? rendition.name, taken: taken)
                taken.insert(folder)
                renditions.append(
                    SelectedRendition(
                        role: role, folder: folder, playlistURL: url, groupID: rendition.groupID,
                        name: rendition.name, language: rendition.language))
            }
        }
        try take(.audio, role: .audio, preference: selection.audio, option: "--audio")
        try take(.subtitles, role: .subtitles, preference: selection.subtitles, option: "--subs")
        return Choice(variant: variant, renditions: renditions)
    }

    private static func noMatch(
        option: String, preference: RenditionPreference, group: [Rendition], masterURL: String
    ) -> HLSDownloadError {
        let available = group.map { rendition in
            rendition.language.map { "\($0) (\(rendition.name))" } ?? rendition.name
        }
        return HLSDownloadError(
            .noMatchingRendition, url: masterURL,
            detail: available.isEmpty
                ? "\(option) \(preference): the chosen variant has no such renditions"
                : "\(option) \(preference) matches none of: \(available.joined(separator: ", "))")
    }
}
