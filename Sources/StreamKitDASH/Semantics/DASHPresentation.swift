import StreamKitHLS

/// An MPD seen as HLS: a multivariant playlist whose variants are the video Representations (or
/// the audio ones when there is no video), whose audio and subtitle renditions are the audio and
/// text AdaptationSets, and, for each, a media playlist of fragmented-MP4 segments with EXT-X-MAP
/// and byte ranges. The HLS download engine then fetches DASH with everything it does for HLS
/// (selection, parallel and resumable transfers, retries, gaps, the queue), and the package's
/// MPD is written from the segments it recorded (``DASHSegmentTag`` keeps each one's DASH timing).
/// Pure.
public struct DASHPresentation: Sendable {
    public let mpd: MPD
    public let mpdURL: String

    /// A Representation of the first Period, named in the multivariant playlist's URIs by a
    /// fragment of the MPD's URL (`#dash=1/0`): the fragment is never sent to a server.
    public struct Key: Hashable, Sendable, CustomStringConvertible {
        public var adaptationSet: Int
        public var representation: Int

        public init(adaptationSet: Int, representation: Int) {
            self.adaptationSet = adaptationSet
            self.representation = representation
        }

        /// The key in the fragment of `url`, if it has one.
        public init?(url: String) {
            guard let hash = url.lastIndex(of: "#") else { return nil }
            let fragment = url[url.index(after: hash)...]
            guard fragment.hasPrefix("dash=") else { return nil }
            let numbers = fragment.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false)
            guard numbers.count == 2, let set = Int(numbers[0]), let representation = Int(numbers[1]), set >= 0,
                representation >= 0
            else { return nil }
            self.init(adaptationSet: set, representation: representation)
        }

        public var description: String { "dash=\(adaptationSet)/\(representation)" }
    }

    public init(mpd: MPD, mpdURL: String) {
        self.mpd = mpd
        self.mpdURL = mpdURL
    }

    /// `mpdURL` with `key` as its fragment.
    public func url(of key: Key) -> String {
        let base = mpdURL.firstIndex(of: "#").map { String(mpdURL[..<$0]) } ?? mpdURL
        return base + "#" + key.description
    }

    // MARK: The multivariant playlist

    /// The first Period as a multivariant playlist: one variant per video Representation (its
    /// bandwidth plus the first audio set's best), audio sets as group `audio` (the set's best
    /// Representation; NAME its Label, else its language, else its id; CHARACTERISTICS its Role
    /// values), text sets as group `subs`.
    public func multivariant() -> MultivariantPlaylist {
        guard let period = mpd.periods.first else { return MultivariantPlaylist() }
        let sets = period.adaptationSets.enumerated().filter { Self.isUnderstood($0.element) }
        let video = sets.filter { $0.element.kind == "video" && !$0.element.representations.isEmpty }
        let audio = sets.filter { $0.element.kind == "audio" && !$0.element.representations.isEmpty }
        let text = sets.filter { $0.element.kind == "text" && !$0.element.representations.isEmpty }
        var renditions: [Rendition] = []
        var usedNames: Set<String> = []
        func name(for set: AdaptationSet, index: Int) -> String {
            let base = set.labels.first ?? set.lang ?? set.id.map { "set \($0)" } ?? "set \(index)"
            var name = base
            var counter = 2
            while !usedNames.insert(name).inserted {
                name = "\(base) \(counter)"
                counter += 1
            }
            return name
        }
        let mainAudio = audio.firstIndex { $0.element.roles.contains { $0.value == "main" } } ?? 0
        for (position, (index, set)) in audio.enumerated() {
            let best = Self.best(in: set)
            renditions.append(
                Rendition(
                    type: .audio, uri: url(of: Key(adaptationSet: index, representation: best)), groupID: "audio",
                    language: set.lang, name: name(for: set, index: index), isDefault: position == mainAudio,
                    autoselect: true, characteristics: Self.characteristics(set),
                    channels: nil))
        }
        for (index, set) in text {
            renditions.append(
                Rendition(
                    type: .subtitles, uri: url(of: Key(adaptationSet: index, representation: Self.best(in: set))),
                    groupID: "subs", language: set.lang, name: name(for: set, index: index), autoselect: true,
                    characteristics: Self.characteristics(set)))
        }
        let audioExtra =
            audio.isEmpty ? nil : audio[mainAudio].element.representations[Self.best(in: audio[mainAudio].element)]
        var variants: [VariantStream] = []
        if video.isEmpty {
            // Audio only: each audio Representation is a variant of its own.
            for (index, set) in audio {
                for (position, representation) in set.representations.enumerated() {
                    variants.append(
                        VariantStream(
                            uri: url(of: Key(adaptationSet: index, representation: position)),
                            bandwidth: max(1, representation.bandwidth),
                            codecs: representation.common.codecs ?? set.common.codecs,
                            subtitles: text.isEmpty ? nil : "subs"))
                }
            }
            renditions.removeAll { $0.type == .audio }
        } else {
            let audioCodecs = audioExtra.flatMap { $0.common.codecs ?? audio[mainAudio].element.common.codecs }
            for (index, set) in video {
                for (position, representation) in set.representations.enumerated() {
                    let width = representation.common.width ?? set.common.width
                    let height = representation.common.height ?? set.common.height
                    let codecs = [representation.common.codecs ?? set.common.codecs, audioCodecs].compactMap { $0 }
                    variants.append(
                        VariantStream(
                            uri: url(of: Key(adaptationSet: index, representation: position)),
                            bandwidth: max(1, Self.sum(representation.bandwidth, audioExtra?.bandwidth ?? 0)),
                            codecs: codecs.isEmpty ? nil : codecs.joined(separator: ","),
                            resolution: width.flatMap { w in height.map { Resolution(width: w, height: $0) } },
                            frameRate: Self.frameRate(representation.common.frameRate ?? set.common.frameRate),
                            audio: audio.isEmpty ? nil : "audio", subtitles: text.isEmpty ? nil : "subs"))
                }
            }
        }
        return MultivariantPlaylist(version: 7, independentSegments: true, renditions: renditions, variants: variants)
    }

    /// EssentialProperty schemes that leave the set's segments as they are to a downloader: the
    /// colour signalling of HDR video (ISO/IEC 23001-8 code points).
    static let understoodEssentialSchemes: Set<String> = [
        "urn:mpeg:mpegB:cicp:ColourPrimaries", "urn:mpeg:mpegB:cicp:TransferCharacteristics",
        "urn:mpeg:mpegB:cicp:MatrixCoefficients",
    ]

    /// Whether every EssentialProperty of `set` is understood: a client must ignore a set with
    /// one it does not know (§5.8.4.8), a trick-mode set (`http://dashif.org/guidelines/trickmode`)
    /// among them.
    static func isUnderstood(_ set: AdaptationSet) -> Bool {
        set.essentialProperties.allSatisfy { understoodEssentialSchemes.contains($0.schemeIdUri) }
    }

    /// `a + b`, saturating: an MPD may write any bandwidth.
    static func sum(_ a: Int, _ b: Int) -> Int {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : total
    }

    /// The Representation of highest bandwidth in `set`.
    static func best(in set: AdaptationSet) -> Int {
        set.representations.indices.max { set.representations[$0].bandwidth < set.representations[$1].bandwidth } ?? 0
    }

    /// The set's Role and Accessibility values, comma separated (`main`, `commentary`,
    /// `description`), for `--audio role:…`.
    static func characteristics(_ set: AdaptationSet) -> String? {
        let values = (set.roles + set.accessibility).compactMap(\.value).filter { !$0.isEmpty && !$0.contains(",") }
        return values.isEmpty ? nil : values.joined(separator: ",")
    }

    /// `25`, `30000/1001` as frames a second.
    static func frameRate(_ text: String?) -> Double? {
        guard let text else { return nil }
        let parts = text.split(separator: "/")
        guard let numerator = parts.first.flatMap({ Double($0) }) else { return nil }
        guard parts.count == 2 else { return numerator }
        guard let denominator = Double(parts[1]), denominator > 0 else { return nil }
        return numerator / denominator
    }

    // MARK: Media playlists

    /// Where `key`'s Representation is in Period `period`: itself in the first; in later ones the
    /// set of the same kind and language (the same id first), and in it the Representation of the
    /// same id, else the nearest bandwidth. `nil` when the Period has no such set.
    public func locate(_ key: Key, inPeriod period: Int) -> (set: Int, representation: Int)? {
        guard let first = mpd.periods.first, key.adaptationSet < first.adaptationSets.count,
            key.representation < first.adaptationSets[key.adaptationSet].representations.count,
            period < mpd.periods.count
        else { return nil }
        if period == 0 { return (key.adaptationSet, key.representation) }
        let source = first.adaptationSets[key.adaptationSet]
        let representation = source.representations[key.representation]
        let candidates = mpd.periods[period].adaptationSets.enumerated().filter {
            $0.element.kind == source.kind && $0.element.lang == source.lang && !$0.element.representations.isEmpty
                && Self.isUnderstood($0.element)
        }
        // The same id; else the same Roles (the main English audio is not its description).
        let roles = Set(source.roles.compactMap(\.value))
        guard
            let set = candidates.first(where: { $0.element.id != nil && $0.element.id == source.id })
                ?? candidates.first(where: { Set($0.element.roles.compactMap(\.value)) == roles })
                ?? candidates.first
        else { return nil }
        let reps = set.element.representations
        func distance(_ index: Int) -> Int { abs(reps[index].bandwidth - representation.bandwidth) }
        let position =
            reps.firstIndex { $0.id == representation.id } ?? reps.indices.min { distance($0) < distance($1) }!
        return (set.offset, position)
    }

    /// The `sidx` boxes `key`'s media playlist needs (SegmentBase with an `indexRange`), by Period.
    public func indexRequests(
        for key: Key, maximumSegments: Int = 2_000_000
    ) throws(SegmentResolutionError) -> [DASHSegment] {
        var requests: [DASHSegment] = []
        for period in mpd.periods.indices {
            guard let (set, position) = locate(key, inPeriod: period) else { continue }
            let adaptationSet = mpd.periods[period].adaptationSets[set]
            // Only a SegmentBase has an index to fetch; a template or a list is not expanded here.
            let levels = [
                mpd.periods[period].segments, adaptationSet.segments, adaptationSet.representations[position].segments,
            ]
            guard !levels.contains(where: { $0.template != nil || $0.list != nil }) else { continue }
            let resolved = try mpd.resolve(
                periodIndex: period, adaptationSet: adaptationSet,
                representation: adaptationSet.representations[position], mpdURL: mpdURL,
                maximumSegments: maximumSegments)
            if let index = resolved.index { requests.append(index) }
        }
        return requests
    }

    /// `key`'s Representation as a media playlist over every Period that has it, a discontinuity
    /// at each Period's start. `indexes` gives the parsed `sidx` of each request of
    /// ``indexRequests(for:maximumSegments:)``, by ``DASHSegment/identity``. A dynamic MPD's
    /// `@duration` templates give the segments available at `now` (seconds since 1970).
    public func mediaPlaylist(
        for key: Key, indexes: [String: SegmentIndex] = [:], maximumSegments: Int = 2_000_000, now: Double? = nil
    ) throws(SegmentResolutionError) -> MediaPlaylist {
        var segments: [MediaSegment] = []
        var firstNumber: UInt64?
        for period in mpd.periods.indices {
            guard let (set, position) = locate(key, inPeriod: period) else { continue }
            let adaptationSet = mpd.periods[period].adaptationSets[set]
            var resolved = try mpd.resolve(
                periodIndex: period, adaptationSet: adaptationSet,
                representation: adaptationSet.representations[position], mpdURL: mpdURL,
                maximumSegments: maximumSegments - segments.count, now: now)
            if let index = resolved.index {
                guard let sidx = indexes[index.identity] else {
                    throw SegmentResolutionError("the index \(index.identity) was not fetched")
                }
                resolved = try Self.segments(of: resolved, from: sidx, indexRange: index)
            }
            guard !resolved.segments.isEmpty else { continue }
            let map = resolved.initialization.map { initialization in
                MediaInitialization(
                    uri: initialization.url,
                    byteRange: initialization.range.map {
                        SegmentByteRange(length: $0.last - $0.first + 1, offset: $0.first)
                    })
            }
            if firstNumber == nil { firstNumber = resolved.segments.first?.number }
            for (offset, segment) in resolved.segments.enumerated() {
                // A segment of more than 30 years is not media (and its seconds would not fit the
                // playlist's integer target duration).
                guard segment.duration.isFinite, segment.duration >= 0, segment.duration <= 1e9 else {
                    throw SegmentResolutionError("a segment of \(segment.duration) seconds")
                }
                let tag = DASHSegmentTag(
                    period: period, adaptationSet: set, representation: position, time: segment.time,
                    duration: segment.ticks, timescale: resolved.timescale)
                segments.append(
                    MediaSegment(
                        uri: segment.url, duration: segment.duration,
                        byteRange: segment.range.map {
                            SegmentByteRange(length: $0.last - $0.first + 1, offset: $0.first)
                        },
                        isDiscontinuity: offset == 0 && !segments.isEmpty, map: offset == 0 ? map : nil,
                        extraLines: [tag.line]))
            }
        }
        guard segments.count <= maximumSegments else {
            throw SegmentResolutionError("more than \(maximumSegments) segments", kind: .tooManySegments)
        }
        let target = segments.map(\.duration).max().map { Int($0.rounded(.up)) } ?? 1
        let live = mpd.type == .dynamic
        return MediaPlaylist(
            version: 7, targetDuration: max(1, target), mediaSequence: firstNumber ?? 0,
            playlistType: live ? nil : .vod, independentSegments: true, segments: segments, hasEndList: !live)
    }

    /// A SegmentBase's segments from its `sidx`: byte ranges of the file at the BaseURL. With no
    /// Initialization written, the initialization is the bytes before the index. (Not the `sidx`
    /// itself: ffmpeg reads a `sidx` in an initialization section as the index of the whole file
    /// and loops.)
    static func segments(
        of resolved: ResolvedRepresentation, from index: SegmentIndex, indexRange: DASHSegment
    ) throws(SegmentResolutionError) -> ResolvedRepresentation {
        var result = resolved
        result.index = nil
        result.timescale = index.timescale
        let scale = Double(index.timescale)
        // The offset is in the MPD's timescale, the references in the sidx's.
        let offset = Double(resolved.presentationTimeOffset) / Double(max(1, resolved.timescale))
        let rescaled = offset * scale
        result.presentationTimeOffset = rescaled.isFinite && rescaled < 1.8e19 ? UInt64(rescaled.rounded()) : 0
        result.segments = index.references.enumerated().map { position, reference in
            DASHSegment(
                url: resolved.baseURL, range: reference.range,
                start: Double(reference.time) / scale - offset, duration: Double(reference.duration) / scale,
                number: UInt64(position + 1), time: reference.time, ticks: reference.duration)
        }
        if resolved.initialization == nil {
            guard let start = indexRange.range?.first, start > 0 else {
                throw SegmentResolutionError("a SegmentBase with neither an Initialization nor bytes before its index")
            }
            result.initialization = DASHSegment(url: resolved.baseURL, range: ByteRangeText(first: 0, last: start - 1))
        }
        return result
    }
}

/// A segment's place in the MPD, kept with it in the recorded playlists
/// (`#STREAMKIT-DASH:P=0,A=1,R=0,T=25600,D=25600,S=12800`) so that the package's MPD can be
/// written with the source's timing, after a resume or a live recording too.
public struct DASHSegmentTag: Hashable, Sendable {
    public var period: Int
    public var adaptationSet: Int
    public var representation: Int
    /// In the timescale: `$Time$` (nil when the MPD gives none).
    public var time: UInt64?
    public var duration: UInt64?
    public var timescale: UInt64

    public static let name = "#STREAMKIT-DASH:"

    public init(
        period: Int, adaptationSet: Int, representation: Int, time: UInt64?, duration: UInt64?, timescale: UInt64
    ) {
        self.period = period
        self.adaptationSet = adaptationSet
        self.representation = representation
        self.time = time
        self.duration = duration
        self.timescale = timescale
    }

    public var line: PlaylistLine {
        var text = Self.name + "P=\(period),A=\(adaptationSet),R=\(representation)"
        if let time { text += ",T=\(time)" }
        if let duration { text += ",D=\(duration)" }
        return PlaylistLine(text + ",S=\(timescale)")
    }

    /// The tag among a segment's lines.
    public init?(lines: [PlaylistLine]) {
        guard let line = lines.last(where: { $0.text.hasPrefix(Self.name) }) else { return nil }
        var values: [Substring: UInt64] = [:]
        for pair in line.text.dropFirst(Self.name.count).split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = UInt64(parts[1]) else { return nil }
            values[parts[0]] = value
        }
        guard let period = values["P"], let set = values["A"], let representation = values["R"],
            let timescale = values["S"], timescale > 0, period < 1 << 31, set < 1 << 31, representation < 1 << 31
        else { return nil }
        self.init(
            period: Int(period), adaptationSet: Int(set), representation: Int(representation), time: values["T"],
            duration: values["D"], timescale: timescale)
    }
}
