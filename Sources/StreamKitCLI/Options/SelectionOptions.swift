import Foundation
import StreamKitDownloads
import StreamKitHLS

/// What to take of an HLS stream, and over how many connections: the options `download` and
/// `queue add` share.
struct SelectionOptions: ParsableArguments {
    @Option(valueName: "variant", help: "HLS variant: best, worst, a bandwidth cap (1500k, 2M) or WxH.")
    var variant = VariantPreference.best
    @Option(
        name: "codec", valueName: "codecs",
        help: "HLS: only variants with one of these codecs (comma-separated prefixes: avc1, hvc1, av01).")
    var codecs: String?
    @Option(
        valueName: "audio",
        help: "Audio (HLS renditions, DASH sets): auto, all, none, a language, en,fr, name:NAME, role:ROLE.")
    var audio = AudioPreference.automatic
    @Option(valueName: "subs", help: "Subtitles (HLS, DASH): all, none, a language, en,fr, name:NAME, role:ROLE.")
    var subs = SubtitlePreference.all
    @Option(
        name: "connections", short: "j", valueName: "n",
        help: "Range connections (file, default 4) or transfers (HLS, default 8).")
    var connections: Int?

    init() {}

    /// The group as a command words it; without `offersCodecFilter` there is no `--codec`.
    init(audioHelp: String, connectionsHelp: String, offersCodecFilter: Bool) {
        _audio = _audio.withHelp(audioHelp)
        _connections = _connections.withHelp(connectionsHelp)
        if !offersCodecFilter { _codecs = _codecs.omitted() }
    }

    mutating func validate() throws {
        if let connections, !(1...64).contains(connections) {
            throw ValidationError("--connections must be between 1 and 64, got \(connections)")
        }
    }

    /// `--codec avc1,hvc1` as a list of prefixes.
    var codecList: [String] {
        (codecs ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The renditions and variant to take.
    var hlsSelection: HLSSelection {
        HLSSelection(variant: variant, audio: audio.rendition, subtitles: subs.rendition, codecs: codecList)
    }
}
