import StreamKitDownloads
import StreamKitHLS

extension VariantPreference: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }

    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be best, worst, a bandwidth such as 1500k, or WxH, got '\(argument)'"
    }
}

/// `--audio`: which audio renditions to take.
struct AudioPreference: Hashable, Sendable, ExpressibleByArgument {
    let rendition: RenditionPreference

    /// The default rendition.
    static let automatic = AudioPreference(rendition: .automatic)

    private init(rendition: RenditionPreference) { self.rendition = rendition }

    init?(argument: String) {
        guard let rendition = RenditionPreference(argument) else { return nil }
        self.rendition = rendition
    }

    var defaultValueDescription: String { rendition.description }

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be auto, all, none, a language or name:NAME, got '\(argument)'"
    }
}

/// `--subs`: which subtitle renditions to take.
struct SubtitlePreference: Hashable, Sendable, ExpressibleByArgument {
    let rendition: RenditionPreference

    /// Every subtitle rendition.
    static let all = SubtitlePreference(rendition: .all)

    private init(rendition: RenditionPreference) { self.rendition = rendition }

    init?(argument: String) {
        guard let rendition = RenditionPreference(argument) else { return nil }
        self.rendition = rendition
    }

    var defaultValueDescription: String { rendition.description }

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be all, none, a language or name:NAME, got '\(argument)'"
    }
}

extension DownloadFileType: ExpressibleByArgument {
    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be video or audio, got '\(argument)'"
    }
}
