import Foundation
import StreamKitDASH
import StreamKitHLS

/// `streamkit inspect FILE [--json]`: parse a playlist and describe it.
public struct InspectCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Parse an HLS playlist or a DASH MPD and summarize it, or print it as JSON.",
        discussion: """
            Prints the variants and renditions of a multivariant playlist, or the segment count, total \
            duration, encryption, maps and byte ranges of a media playlist. Problems the parser tolerates are \
            listed on standard error as warnings; --strict turns every one into an error. An MPD (told by \
            its first element) is summarized by Period, AdaptationSet and Representation; with --json, \
            every Representation's segments are listed resolved: URLs, byte ranges, times.
            """,
        examples: [
            .init("Summarize a media playlist", "streamkit inspect index.m3u8"),
            .init("Summarize a playlist on a server", "streamkit inspect https://example.com/live/master.m3u8"),
            .init("Print the parsed model as one JSON object", "streamkit inspect master.m3u8 --json"),
            .init("Check a playlist against RFC 8216bis", "streamkit inspect index.m3u8 --strict"),
            .init("List a DASH stream's Representations and segments", "streamkit inspect manifest.mpd --json"),
        ],
        group: "Playlists")

    @Argument(valueName: "url-or-file", help: "The playlist or MPD: an http(s) URL or a file (.m3u8, .mpd).")
    var source: String
    @OptionGroup var format = JSONOutputOptions(
        help: "Print the parsed playlist as one JSON object on standard output.")
    @Flag(help: "Report every violation of RFC 8216bis and fail if there is any.") var strict = false

    public init() {}

    public func run(_ context: CommandContext) async throws {
        let loaded: LoadedPlaylist
        do {
            loaded = try await PlaylistLoader.load(source)
        } catch {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        if MPD.looksLikeMPD(loaded.bytes) {
            let mpd: MPD
            do {
                mpd = try MPD.parse(loaded.bytes)
            } catch {
                context.writeError("error: \(source): \(error.reason)\n")
                throw ExitCode.failure
            }
            if format.json {
                InspectMPD.write(file: source, mpd: mpd, url: loaded.url.absoluteString, to: context.output)
            } else {
                context.write(InspectMPD.text(file: source, mpd: mpd, url: loaded.url.absoluteString))
            }
            return
        }
        let options = PlaylistParseOptions(strictness: strict ? .strict : .lenient, playlistURL: loaded.url)
        let parsed: ParsedPlaylist
        do {
            parsed = try Playlist.parse(loaded.bytes, options: options)
        } catch {
            for diagnostic in error.diagnostics {
                context.writeError("error: \(source): line \(diagnostic.line): \(diagnostic.reason)\n")
            }
            throw ExitCode.failure
        }
        if format.json {
            try InspectReport.write(
                file: source, parsed: parsed, baseURL: loaded.url.absoluteString, to: context.output)
        } else {
            for warning in parsed.warnings {
                context.writeError("warning: \(source): line \(warning.line): \(warning.reason)\n")
            }
            context.write(InspectSummary.text(file: source, parsed: parsed, baseURL: loaded.url.absoluteString))
        }
    }
}

/// What a media playlist's segments add up to.
struct MediaFacts {
    var encryptedSegments = 0
    var methods: [String] = []
    var keyURIs: [String] = []
    var explicitIVs = 0
    var derivedIVs = 0
    var mapURIs: [String] = []
    var byteRangeSegments = 0
    var byteRangeResources: [String] = []
    var discontinuities = 0
    var gaps = 0
    var parts = 0
    var firstDate: HLSDateTime?
    var lastDate: HLSDateTime?

    /// One pass over the resolved segments, keeping none of them.
    init(_ playlist: MediaPlaylist, baseURL: String) {
        var seenMethods: Set<String> = []
        var seenKeys: Set<String> = []
        var seenMaps: Set<String> = []
        var seenResources: Set<String> = []
        // Keys, map and resource mostly stay the same from one segment to the next: only a change is
        // looked up in the sets.
        var previousKeys: [ResolvedKey] = []
        var previousMap: String?
        var previousResource: String?
        playlist.forEachResolvedSegment(baseURL: baseURL) { segment in
            var encrypted = false
            for key in segment.keys where key.method != .noEncryption {
                encrypted = true
                if key.isIVExplicit { explicitIVs += 1 } else { derivedIVs += 1 }
            }
            if encrypted { encryptedSegments += 1 }
            let sameKeys =
                segment.keys.count == previousKeys.count
                && zip(segment.keys, previousKeys).allSatisfy { $0.method == $1.method && $0.uri == $1.uri }
            if !sameKeys {
                for key in segment.keys where key.method != .noEncryption {
                    if seenMethods.insert(key.method.rawValue).inserted { methods.append(key.method.rawValue) }
                    if let uri = key.uri, seenKeys.insert(uri).inserted { keyURIs.append(uri) }
                }
                previousKeys = segment.keys
            }
            if let map = segment.map, map.uri != previousMap {
                previousMap = map.uri
                if seenMaps.insert(map.uri).inserted { mapURIs.append(map.uri) }
            }
            if segment.byteRange != nil {
                byteRangeSegments += 1
                if segment.uri != previousResource {
                    previousResource = segment.uri
                    if seenResources.insert(segment.uri).inserted { byteRangeResources.append(segment.uri) }
                }
            }
            if segment.isDiscontinuity { discontinuities += 1 }
            if segment.isGap { gaps += 1 }
            if let date = segment.programDateTime {
                if firstDate == nil { firstDate = date }
                lastDate = date
            }
        }
        parts = playlist.segments.reduce(playlist.pendingSegment.parts.count) { $0 + $1.parts.count }
    }
}

/// The human-readable summary.
enum InspectSummary {
    static func text(file: String, parsed: ParsedPlaylist, baseURL: String) -> String {
        switch parsed.playlist {
        case .media(let media): mediaText(file: file, media, warnings: parsed.warnings.count, baseURL: baseURL)
        case .multivariant(let multivariant):
            multivariantText(file: file, multivariant, warnings: parsed.warnings.count)
        }
    }

    private static func header(_ file: String, _ kind: String, version: Int?, warnings: Int) -> String {
        var line = "\(file): \(kind) playlist, version \(version.map(String.init) ?? "1 (no EXT-X-VERSION)")"
        if warnings > 0 { line += ", \(warnings) warning\(warnings == 1 ? "" : "s") (on standard error)" }
        return line + "\n"
    }

    static func mediaText(file: String, _ playlist: MediaPlaylist, warnings: Int, baseURL: String) -> String {
        let facts = MediaFacts(playlist, baseURL: baseURL)
        var text = header(file, "media", version: playlist.version, warnings: warnings)
        var kind = playlist.hasEndList ? "complete (EXT-X-ENDLIST)" : "live (no EXT-X-ENDLIST)"
        if let type = playlist.playlistType { kind += ", \(type.rawValue)" }
        if playlist.iFramesOnly { kind += ", I-frames only" }
        text += "  type: \(kind)\n"
        text += "  segments: \(playlist.segments.count), total duration \(duration(playlist.totalDuration))"
        text += playlist.targetDuration.map { ", target duration \($0) s" } ?? ", no target duration"
        text += "\n"
        text += "  media sequence: \(playlist.firstListedMediaSequence)"
        if let skipped = playlist.skip?.skippedSegments { text += " (\(skipped) skipped)" }
        if facts.discontinuities > 0 { text += ", discontinuities: \(facts.discontinuities)" }
        if facts.gaps > 0 { text += ", gaps: \(facts.gaps)" }
        text += "\n"
        if facts.encryptedSegments == 0 {
            text += "  encryption: none\n"
        } else {
            var ivs: [String] = []
            if facts.explicitIVs > 0 { ivs.append("explicit IV") }
            if facts.derivedIVs > 0 { ivs.append("IV from the media sequence") }
            text += "  encryption: \(facts.methods.joined(separator: ", ")) on \(facts.encryptedSegments) of "
            text +=
                "\(playlist.segments.count) segments, \(facts.keyURIs.count) key\(facts.keyURIs.count == 1 ? "" : "s")"
            text += ", \(ivs.joined(separator: " and "))\n"
            for uri in facts.keyURIs.prefix(3) { text += "    key \(uri)\n" }
            if facts.keyURIs.count > 3 { text += "    … and \(facts.keyURIs.count - 3) more\n" }
        }
        if facts.mapURIs.isEmpty {
            text += "  maps: none\n"
        } else {
            text += "  maps: \(facts.mapURIs.count)\n"
            for uri in facts.mapURIs.prefix(3) { text += "    \(uri)\n" }
            if facts.mapURIs.count > 3 { text += "    … and \(facts.mapURIs.count - 3) more\n" }
        }
        if facts.byteRangeSegments == 0 {
            text += "  byte ranges: none\n"
        } else {
            text += "  byte ranges: \(facts.byteRangeSegments) segments in \(facts.byteRangeResources.count) "
            text += "resource\(facts.byteRangeResources.count == 1 ? "" : "s")\n"
        }
        if let first = facts.firstDate, let last = facts.lastDate {
            text += "  program date-time: \(first) to \(last)\n"
        }
        if facts.parts > 0 || playlist.partInformation != nil {
            text += "  low-latency: \(facts.parts) parts"
            if let target = playlist.partInformation?.partTarget { text += ", part target \(target) s" }
            text +=
                ", \(playlist.preloadHints.count) preload hints, \(playlist.renditionReports.count) rendition reports\n"
        }
        return text
    }

    static func multivariantText(file: String, _ playlist: MultivariantPlaylist, warnings: Int) -> String {
        var text = header(file, "multivariant", version: playlist.version, warnings: warnings)
        text += "  variants: \(playlist.variants.count)\n"
        for variant in playlist.variants.sorted(by: { $0.effectiveBandwidth > $1.effectiveBandwidth }) {
            var columns = ["\(variant.bandwidth) bit/s"]
            if let average = variant.averageBandwidth { columns.append("average \(average)") }
            if let resolution = variant.resolution { columns.append(resolution.description) }
            if let rate = variant.frameRate { columns.append("\(rate) fps") }
            if let codecs = variant.codecs { columns.append(codecs) }
            if let audio = variant.audio { columns.append("audio \(audio)") }
            if let subtitles = variant.subtitles { columns.append("subtitles \(subtitles)") }
            if let video = variant.video { columns.append("video \(video)") }
            switch variant.closedCaptions {
            case .group(let id): columns.append("captions \(id)")
            case .noneDeclared: columns.append("captions NONE")
            case nil: break
            }
            text += "    \(columns.joined(separator: ", ")): \(variant.uri)\n"
        }
        text += "  renditions: \(playlist.renditions.count)\n"
        for rendition in playlist.renditions {
            var columns = ["\(rendition.type.rawValue) \(rendition.groupID)", "\"\(rendition.name)\""]
            if let language = rendition.language { columns.append(language) }
            if rendition.isDefault { columns.append("default") }
            if rendition.autoselect { columns.append("autoselect") }
            if rendition.forced { columns.append("forced") }
            if let channels = rendition.channels { columns.append("\(channels) channels") }
            if let instream = rendition.instreamID { columns.append(instream) }
            text += "    \(columns.joined(separator: ", ")): \(rendition.uri ?? "(in the variant)")\n"
        }
        text += "  I-frame playlists: \(playlist.iFrameVariants.count)\n"
        for variant in playlist.iFrameVariants.sorted(by: { $0.bandwidth > $1.bandwidth }) {
            var columns = ["\(variant.bandwidth) bit/s"]
            if let resolution = variant.resolution { columns.append(resolution.description) }
            if let codecs = variant.codecs { columns.append(codecs) }
            text += "    \(columns.joined(separator: ", ")): \(variant.uri)\n"
        }
        if !playlist.sessionData.isEmpty { text += "  session data: \(playlist.sessionData.count)\n" }
        if !playlist.sessionKeys.isEmpty {
            text += "  session keys: \(playlist.sessionKeys.map(\.method.rawValue).joined(separator: ", "))\n"
        }
        if let steering = playlist.contentSteering { text += "  content steering: \(steering.serverURI)\n" }
        return text
    }

    /// `12.345 s (0:12)` or `3725.000 s (1:02:05)`.
    static func duration(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? Int(min(max(seconds.rounded(), 0), 1e15)) : 0
        let clock =
            whole >= 3_600
            ? String(format: "%d:%02d:%02d", whole / 3_600, whole % 3_600 / 60, whole % 60)
            : String(format: "%d:%02d", whole / 60, whole % 60)
        return String(format: "%.3f s", seconds) + " (\(clock))"
    }
}
