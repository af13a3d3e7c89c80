import StreamKitDownloads
import StreamKitHLS

extension VariantPreference: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }

    public static var completionValues: [String] { ["best", "worst"] }

    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be best, worst, a bandwidth such as 1500k, or WxH, got '\(argument)'"
    }
}

/// `--audio` or `--subs`: which renditions of one type to take; `Kind` gives the default and the
/// words the message lists.
struct RenditionArgument<Kind: RenditionArgumentKind>: Hashable, Sendable, ExpressibleByArgument {
    let rendition: RenditionPreference

    fileprivate init(rendition: RenditionPreference) { self.rendition = rendition }

    init?(argument: String) {
        guard let rendition = RenditionPreference(argument) else { return nil }
        self.rendition = rendition
    }

    var defaultValueDescription: String { rendition.description }

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be \(Kind.choices), got '\(argument)'"
    }

    static var completionValues: [String] { Kind.words }
}

/// What differs between the rendition arguments.
protocol RenditionArgumentKind: Hashable, Sendable {
    /// The words of the message for a value that is not one of them.
    static var choices: String { get }
    /// The fixed words a shell offers.
    static var words: [String] { get }
}

enum AudioRenditionKind: RenditionArgumentKind {
    static let choices = "auto, all, none, a language, languages (en,fr), name:NAME or role:ROLE"
    static let words = ["auto", "all", "none"]
}

enum SubtitleRenditionKind: RenditionArgumentKind {
    static let choices = "all, none, a language, languages (en,fr), name:NAME or role:ROLE"
    static let words = ["all", "none"]
}

/// `--audio`: which audio renditions to take.
typealias AudioPreference = RenditionArgument<AudioRenditionKind>

/// `--subs`: which subtitle renditions to take.
typealias SubtitlePreference = RenditionArgument<SubtitleRenditionKind>

extension RenditionArgument where Kind == AudioRenditionKind {
    /// The default rendition.
    static var automatic: Self { Self(rendition: .automatic) }
}

extension RenditionArgument where Kind == SubtitleRenditionKind {
    /// Every subtitle rendition.
    static var all: Self { Self(rendition: .all) }
}

extension DownloadFileType: ExpressibleByArgument {
    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be video or audio, got '\(argument)'"
    }
}

extension SubtitleFormat: ExpressibleByArgument {
    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be vtt or srt, got '\(argument)'"
    }
}
