/// How a package is laid out on disk. Every name is made here from numbers, a fixed set of
/// extensions and sanitized language tags; nothing taken from the network becomes a path.
///
/// ```
/// ID/index.m3u8                 the multivariant playlist players open
/// ID/manifest.mpd               for a DASH source: the MPD over the same files
/// ID/package.json               source URLs, selection, per-file state
/// ID/.streamkit/video.m3u8      the source playlists as recorded (absolute URIs), for resume
/// ID/.streamkit/source.mpd      for a DASH source: the MPD as last fetched
/// ID/video/index.m3u8           one folder per rendition: its media playlist,
/// ID/video/00000.ts             segments named by media sequence number,
/// ID/video/init-0.mp4           maps, keys and single files of byte-range playlists
/// ID/audio-fr/index.m3u8
/// ```
public enum PackageLayout {
    /// The multivariant playlist a player opens.
    public static let indexName = "index.m3u8"
    /// A DASH package's MPD, beside `index.m3u8` (both over the same files).
    public static let mpdName = "manifest.mpd"
    /// The package state.
    public static let manifestName = "package.json"
    /// The folder holding the recorded source playlists.
    public static let internalFolder = ".streamkit"
    /// What changed since `package.json` was last written, a line per checkpoint
    /// (``PackageManifestUpdate``).
    static let journalName = internalFolder + "/package.journal"
    /// A rendition's media playlist, inside its folder.
    public static let mediaPlaylistName = "index.m3u8"
    /// Suffixes of files being written; never referenced by a playlist.
    static let encryptedSuffix = ".streamkit-encrypted"
    static let clearSuffix = ".streamkit-clear"
    static let rangedPartialSuffix = ".streamkit-partial"
    static let rangesRecordSuffix = ".streamkit-ranges"
    static let temporarySuffix = ".streamkit-tmp"

    /// Extensions kept from a URI's path; anything else gets the extension of its kind.
    static let knownExtensions: Set<String> = [
        "ts", "m4s", "mp4", "m4a", "m4v", "aac", "ac3", "ec3", "eac3", "mp3", "vtt", "webvtt", "ttml", "srt",
        "cmfv", "cmfa", "cmft", "m2ts", "mts",
    ]

    /// A rendition folder name: `video` (or `audio` for an audio-only variant), `audio-LANG`,
    /// `subtitles-LANG`, made unique among `taken` with `-2`, `-3`, ...
    static func renditionFolder(role: RenditionRole, label: String?, taken: Set<String>) -> String {
        var base: String
        switch role {
        case .main: base = "video"
        case .mainAudioOnly: base = "audio"
        case .audio: base = "audio"
        case .subtitles: base = "subtitles"
        }
        if role == .audio || role == .subtitles, let slug = label.map(slug), !slug.isEmpty { base += "-" + slug }
        var name = base
        var counter = 2
        while taken.contains(name) {
            name = "\(base)-\(counter)"
            counter += 1
        }
        return name
    }

    /// Lower-case ASCII letters, digits and single dashes, at most 24 characters.
    static func slug(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if result.count >= 24 { break }
            let lower = scalar.properties.lowercaseMapping
            if lower.count == 1, let character = lower.unicodeScalars.first, character.isASCII,
                character.properties.isAlphabetic || ("0"..."9").contains(character)
            {
                result.unicodeScalars.append(character)
            } else if !result.isEmpty, !result.hasSuffix("-") {
                result += "-"
            }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return result
    }

    /// The extension for a file fetched from `uri`: the URI path's own when it is a known media
    /// extension, otherwise `fallback`.
    static func fileExtension(forURI uri: String, fallback: String) -> String {
        var path = Substring(uri)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard let slash = path.lastIndex(of: "/") else { return fallback }
        let name = path[path.index(after: slash)...]
        guard let dot = name.lastIndex(of: ".") else { return fallback }
        let ext = name[name.index(after: dot)...].lowercased()
        return knownExtensions.contains(ext) ? ext : fallback
    }

    /// `00042.ts`: the number with at least five digits.
    static func numberedName(_ number: UInt64, extension ext: String, prefix: String = "") -> String {
        var digits = String(number)
        while digits.count < 5 { digits = "0" + digits }
        return prefix + digits + "." + ext
    }

    /// Whether `path` is a relative path that stays inside the package: components of letters,
    /// digits, `.`, `-` and `_`, none empty, `.` or `..`, none starting with a dot except the
    /// internal folder.
    static func isContained(_ path: String) -> Bool {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.isEmpty else { return false }
        for component in components {
            guard !component.isEmpty, component != ".", component != ".." else { return false }
            if component.hasPrefix("."), component != Substring(internalFolder) { return false }
            guard
                component.unicodeScalars.allSatisfy({
                    $0.isASCII
                        && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
                })
            else { return false }
        }
        return true
    }
}

/// What a rendition is in the package.
enum RenditionRole: String, Codable, Sendable, Hashable {
    /// The variant stream's own media playlist (video, usually with audio).
    case main
    /// The variant stream's media playlist when the variant has no video.
    case mainAudioOnly
    /// An alternative audio rendition (EXT-X-MEDIA TYPE=AUDIO).
    case audio
    /// A subtitle rendition (EXT-X-MEDIA TYPE=SUBTITLES).
    case subtitles
}
