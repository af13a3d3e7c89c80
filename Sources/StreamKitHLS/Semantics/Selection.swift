/// Which variant stream to play or download: the `--variant best|worst|BANDWIDTH|WxH` of `streamkit download`.
public enum VariantPreference: Hashable, Sendable, CustomStringConvertible {
    /// The highest bandwidth.
    case best
    /// The lowest bandwidth that has video (audio-only variants only when there is nothing else).
    case worst
    /// The highest bandwidth at or under this many bits per second.
    case maximumBandwidth(Int)
    /// The largest resolution that fits inside this one (highest bandwidth among equals).
    case maximumResolution(Resolution)

    /// Parses `best`, `worst`, a bandwidth in bits per second (`1500000`, `1500k`, `1.5M`), or `WIDTHxHEIGHT`.
    public init?(_ text: String) {
        switch text.lowercased() {
        case "best": self = .best
        case "worst": self = .worst
        default:
            if let resolution = Resolution(text) {
                self = .maximumResolution(resolution)
                return
            }
            var number = Substring(text)
            var multiplier = 1.0
            switch number.last {
            case "k", "K":
                multiplier = 1_000
                number = number.dropLast()
            case "m", "M":
                multiplier = 1_000_000
                number = number.dropLast()
            default: break
            }
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                let value = Double(number), value.isFinite, value * multiplier < 9.0e18
            else { return nil }
            self = .maximumBandwidth(Int(value * multiplier))
        }
    }

    /// `best`, `worst`, the bandwidth, or `WxH`.
    public var description: String {
        switch self {
        case .best: "best"
        case .worst: "worst"
        case .maximumBandwidth(let bandwidth): "\(bandwidth)"
        case .maximumResolution(let resolution): resolution.description
        }
    }
}

/// Which renditions of a group to take: the `--audio LANG|all` and `--subs LANG|all|none` of `streamkit download`.
public enum RenditionPreference: Hashable, Sendable, CustomStringConvertible {
    /// The DEFAULT=YES rendition, else the first AUTOSELECT=YES one, else the first.
    case automatic
    /// Every rendition of the group.
    case all
    /// None.
    case none
    /// Renditions whose LANGUAGE matches (RFC 5646 primary subtag; `en` matches `eng` and `en-US`), exact
    /// matches first.
    case language(String)
    /// The rendition with this NAME (ignoring case).
    case name(String)
    /// Several languages at once (`en,fr`): for each in turn, what ``language(_:)`` takes.
    case languages([String])
    /// Renditions whose CHARACTERISTICS (for DASH, the Role and Accessibility values) include
    /// this one (`role:commentary`, `role:main`), ignoring case.
    case role(String)

    /// Parses `auto`, `all`, `none`, `name:NAME`, `role:ROLE`, a language tag, or language tags
    /// separated by commas.
    public init?(_ text: String) {
        func isTag(_ text: Substring) -> Bool {
            !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
        switch text.lowercased() {
        case "", "auto", "default": self = .automatic
        case "all": self = .all
        case "none": self = .none
        default:
            if text.lowercased().hasPrefix("name:") {
                self = .name(String(text.dropFirst(5)))
            } else if text.lowercased().hasPrefix("role:"), text.count > 5 {
                self = .role(String(text.dropFirst(5)))
            } else if text.contains(",") {
                let tags = text.split(separator: ",", omittingEmptySubsequences: false)
                guard tags.allSatisfy(isTag) else { return nil }
                self = .languages(tags.map(String.init))
            } else if text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
                self = .language(text)
            } else {
                return nil
            }
        }
    }

    public var description: String {
        switch self {
        case .automatic: "auto"
        case .all: "all"
        case .none: "none"
        case .language(let language): language
        case .name(let name): "name:\(name)"
        case .languages(let languages): languages.joined(separator: ",")
        case .role(let role): "role:\(role)"
        }
    }

    /// The renditions chosen from `renditions` (normally one group), in preference order.
    public func select(from renditions: [Rendition]) -> [Rendition] {
        switch self {
        case .all: return renditions
        case .none: return []
        case .automatic:
            if let chosen = renditions.first(where: \.isDefault) ?? renditions.first(where: \.autoselect)
                ?? renditions.first
            {
                return [chosen]
            }
            return []
        case .name(let name):
            return renditions.filter { $0.name.lowercased() == name.lowercased() }
        case .role(let role):
            return renditions.filter { rendition in
                (rendition.characteristics ?? "").split(separator: ",").contains {
                    $0.filter { $0 != " " }.lowercased() == role.lowercased()
                }
            }
        case .languages(let languages):
            var taken: [Rendition] = []
            for language in languages {
                for rendition in RenditionPreference.language(language).select(from: renditions)
                where !taken.contains(rendition) {
                    taken.append(rendition)
                }
            }
            return taken
        case .language(let wanted):
            let exact = renditions.filter { $0.language?.lowercased() == wanted.lowercased() }
            let related = renditions.filter { rendition in
                guard let language = rendition.language, language.lowercased() != wanted.lowercased() else {
                    return false
                }
                return LanguageTag.primary(language) == LanguageTag.primary(wanted)
            }
            return (exact + related).sorted { lhs, rhs in
                let lhsExact = lhs.language?.lowercased() == wanted.lowercased()
                let rhsExact = rhs.language?.lowercased() == wanted.lowercased()
                if lhsExact != rhsExact { return lhsExact }
                return lhs.isDefault && !rhs.isDefault
            }
        }
    }
}

extension VariantStream {
    /// Whether the variant carries no video: its CODECS are all audio codecs and it has no RESOLUTION.
    public var isAudioOnly: Bool {
        let codecs = codecList
        return resolution == nil && !codecs.isEmpty && !codecs.contains(where: CodecFamily.isVideo)
    }

    /// Whether CODECS names a codec starting with one of `prefixes` (`avc1`, `hvc1`, `mp4a`…), or, when
    /// `prefixes` is empty, always.
    public func hasCodec(withPrefixIn prefixes: [String]) -> Bool {
        prefixes.isEmpty
            || codecList.contains { codec in prefixes.contains { codec.lowercased().hasPrefix($0.lowercased()) } }
    }
}

extension MultivariantPlaylist {
    /// The variant to play or download, or `nil` when none fits. I-frame playlists are never chosen.
    ///
    /// Variants compare by AVERAGE-BANDWIDTH when present, else BANDWIDTH; ties by resolution, then SCORE.
    ///
    /// - Parameters:
    ///   - preference: best, worst, a bandwidth cap, or a resolution cap.
    ///   - codecs: Keep only variants with a codec starting with one of these (`["avc1"]`); all when empty.
    public func selectVariant(_ preference: VariantPreference, codecs: [String] = []) -> VariantStream? {
        let candidates = variants.filter { $0.hasCodec(withPrefixIn: codecs) }
        func ascending(_ lhs: VariantStream, _ rhs: VariantStream) -> Bool {
            if lhs.effectiveBandwidth != rhs.effectiveBandwidth {
                return lhs.effectiveBandwidth < rhs.effectiveBandwidth
            }
            let lhsPixels = lhs.resolution?.pixelCount ?? 0
            let rhsPixels = rhs.resolution?.pixelCount ?? 0
            if lhsPixels != rhsPixels { return lhsPixels < rhsPixels }
            return (lhs.score ?? 0) < (rhs.score ?? 0)
        }
        switch preference {
        case .best:
            return candidates.max(by: ascending)
        case .worst:
            let withVideo = candidates.filter { !$0.isAudioOnly }
            return (withVideo.isEmpty ? candidates : withVideo).min(by: ascending)
        case .maximumBandwidth(let cap):
            return candidates.filter { $0.effectiveBandwidth <= cap }.max(by: ascending)
        case .maximumResolution(let limit):
            let fitting = candidates.filter { variant in
                guard let resolution = variant.resolution else { return false }
                return resolution.width <= limit.width && resolution.height <= limit.height
            }
            return fitting.max { lhs, rhs in
                let lhsPixels = lhs.resolution?.pixelCount ?? 0
                let rhsPixels = rhs.resolution?.pixelCount ?? 0
                return lhsPixels != rhsPixels ? lhsPixels < rhsPixels : ascending(lhs, rhs)
            }
        }
    }

    /// The renditions of `type` in the group the variant names (its AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS
    /// attribute); empty when it names none (or CLOSED-CAPTIONS=NONE).
    public func renditions(of type: RenditionType, for variant: VariantStream) -> [Rendition] {
        let group: String?
        switch type {
        case .audio: group = variant.audio
        case .video: group = variant.video
        case .subtitles: group = variant.subtitles
        case .closedCaptions:
            if case .group(let id) = variant.closedCaptions { group = id } else { group = nil }
        }
        guard let group else { return [] }
        return renditions.filter { $0.type == type && $0.groupID == group }
    }

    /// The variant's alternative audio renditions.
    public func audioRenditions(for variant: VariantStream) -> [Rendition] { renditions(of: .audio, for: variant) }

    /// The variant's subtitle renditions.
    public func subtitleRenditions(for variant: VariantStream) -> [Rendition] {
        renditions(of: .subtitles, for: variant)
    }

    /// The variant's closed-caption renditions (carried inside the video).
    public func closedCaptionRenditions(for variant: VariantStream) -> [Rendition] {
        renditions(of: .closedCaptions, for: variant)
    }

    /// The variant's alternative video renditions.
    public func videoRenditions(for variant: VariantStream) -> [Rendition] { renditions(of: .video, for: variant) }

    /// Renditions of any group, of `type` when given, whose LANGUAGE matches `language` (see
    /// ``RenditionPreference/language(_:)``).
    public func renditions(language: String, type: RenditionType? = nil) -> [Rendition] {
        RenditionPreference.language(language).select(from: renditions.filter { type == nil || $0.type == type })
    }

    /// Renditions of any group, of `type` when given, named `name` (ignoring case).
    public func renditions(named name: String, type: RenditionType? = nil) -> [Rendition] {
        RenditionPreference.name(name).select(from: renditions.filter { type == nil || $0.type == type })
    }
}

/// Codec families by RFC 6381 sample entry prefix.
enum CodecFamily {
    static let videoPrefixes = [
        "avc1", "avc3", "hvc1", "hev1", "dvh1", "dvhe", "dva1", "dvav", "av01", "vp09", "vp08", "mp4v",
    ]

    static func isVideo(_ codec: String) -> Bool {
        let lower = codec.lowercased()
        return videoPrefixes.contains { lower.hasPrefix($0) }
    }
}

/// RFC 5646 language tags, compared by primary language with ISO 639-2 codes mapped to ISO 639-1.
enum LanguageTag {
    private static let twoLetter: [String: String] = [
        "eng": "en", "fra": "fr", "fre": "fr", "deu": "de", "ger": "de", "spa": "es", "ita": "it", "por": "pt",
        "nld": "nl", "dut": "nl", "swe": "sv", "nor": "no", "nob": "nb", "dan": "da", "fin": "fi", "pol": "pl",
        "ces": "cs", "cze": "cs", "rus": "ru", "ukr": "uk", "ell": "el", "gre": "el", "tur": "tr", "ara": "ar",
        "heb": "he", "hin": "hi", "jpn": "ja", "kor": "ko", "zho": "zh", "chi": "zh", "vie": "vi", "tha": "th",
        "ind": "id", "msa": "ms", "may": "ms", "hun": "hu", "ron": "ro", "rum": "ro", "bul": "bg", "hrv": "hr",
        "srp": "sr", "slk": "sk", "slo": "sk", "slv": "sl", "cat": "ca", "eus": "eu", "baq": "eu", "glg": "gl",
        "fas": "fa", "per": "fa", "urd": "ur", "ben": "bn", "tam": "ta", "tel": "te", "isl": "is", "ice": "is",
    ]

    /// The primary language subtag, lower-cased, as ISO 639-1 when a two-letter code exists.
    static func primary(_ tag: String) -> String {
        let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return twoLetter[primary] ?? primary
    }
}
