import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient

/// Which parts of a presentation go into a package: the `--variant`, `--audio`, `--subs`,
/// `--codec`, `--section` and `--exclude-segments` words of `streamkit download`.
public struct HLSSelection: Hashable, Sendable {
    /// The variant stream (default: the best).
    public var variant: VariantPreference
    /// The variant's alternative audio renditions (default: the DEFAULT=YES one).
    public var audio: RenditionPreference
    /// The variant's subtitle renditions (default: all of them).
    public var subtitles: RenditionPreference
    /// Only variants whose CODECS name a codec starting with one of these (`avc1`, `hvc1`, `av01`);
    /// any variant when empty (the default).
    public var codecs: [String]
    /// Only the segments that cover these spans of media time (VOD), or where a live recording
    /// begins and how long it lasts (one section); the whole stream when empty.
    public var sections: [TimeSection]
    /// Segments whose absolute URI matches one of these regular expressions (NSRegularExpression)
    /// are left out, the gap closed with EXT-X-DISCONTINUITY.
    public var excludedSegments: [String]

    /// Creates a selection.
    public init(
        variant: VariantPreference = .best, audio: RenditionPreference = .automatic,
        subtitles: RenditionPreference = .all, codecs: [String] = [], sections: [TimeSection] = [],
        excludedSegments: [String] = []
    ) {
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.codecs = codecs
        self.sections = sections
        self.excludedSegments = excludedSegments
    }
}

extension HLSSelection: Codable {
    private enum CodingKeys: String, CodingKey { case variant, audio, subtitles, codecs, sections, excludedSegments }

    /// Decodes the words written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func word<Value>(_ key: CodingKeys, _ parse: (String) -> Value?) throws -> Value {
            let text = try container.decode(String.self, forKey: key)
            guard let value = parse(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "'\(text)'")
            }
            return value
        }
        variant = try word(.variant, VariantPreference.init)
        audio = try word(.audio, RenditionPreference.init)
        subtitles = try word(.subtitles, RenditionPreference.init)
        codecs = try container.decodeIfPresent([String].self, forKey: .codecs) ?? []
        sections = []
        for text in try container.decodeIfPresent([String].self, forKey: .sections) ?? [] {
            guard let section = try? TimeSection.parse(text) else {
                throw DecodingError.dataCorruptedError(forKey: .sections, in: container, debugDescription: "'\(text)'")
            }
            sections.append(section)
        }
        excludedSegments = try container.decodeIfPresent([String].self, forKey: .excludedSegments) ?? []
    }

    /// Encodes each preference as its command-line word (`best`, `auto`, `all`, `fr`, `name:…`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(variant.description, forKey: .variant)
        try container.encode(audio.description, forKey: .audio)
        try container.encode(subtitles.description, forKey: .subtitles)
        if !codecs.isEmpty { try container.encode(codecs, forKey: .codecs) }
        if !sections.isEmpty { try container.encode(sections.map(\.description), forKey: .sections) }
        if !excludedSegments.isEmpty { try container.encode(excludedSegments, forKey: .excludedSegments) }
    }
}

/// How an HLS download behaves: connections, decryption, failures, limits.
public struct HLSDownloadOptions: Hashable, Sendable {
    /// Transfers at once (`-j`); the client should allow as many connections per host (see
    /// ``mostConnections``).
    public var connections: Int
    /// When above ``connections``: the download starts with ``connections`` transfers and adds
    /// four at a time, up to this many, while each step raises the throughput (a far server, whose
    /// round trip bounds each connection); a step that does not is taken back. `streamkit
    /// download` sets 15 when `-j` is not given. The client should allow this many connections
    /// per host.
    public var mostConnections: Int? = nil
    /// Store AES-128 segments and SAMPLE-AES MPEG-TS segments decrypted and drop their key tags
    /// (`--decrypt`). SAMPLE-AES with a map (fMP4 `cbcs`) fails the download with
    /// ``HLSDownloadError/Kind-swift.struct/unsupportedEncryption``; SAMPLE-AES-CTR stays encrypted.
    public var decrypt: Bool
    /// A segment that still fails after retries becomes a gap instead of failing the download: left
    /// out of the package's playlist (see ``gapTags``) and recorded in `package.json`, so that a
    /// later run fetches it again.
    public var skipBroken: Bool
    /// How the package's playlist writes a segment it does not have (skipped, or EXT-X-GAP in the
    /// source): `false` leaves it out with EXT-X-DISCONTINUITY on the next segment, which every
    /// player plays on; `true` writes it as EXT-X-GAP (`--gap-tags`), which some players stop at.
    public var gapTags: Bool
    /// Headers sent with every request (playlists, keys, maps, segments).
    public var headers: HTTPHeaders
    /// For a live playlist: stop once this much media has been recorded (`--live-duration`). Without
    /// it, a live playlist is recorded until EXT-X-ENDLIST or ``HLSDownload/finishRecording()``.
    /// Ignored for VOD.
    public var liveDuration: Duration?
    /// The most segments one media playlist may list (a playlist with more is refused).
    public var maximumSegments: Int
    /// The largest playlist accepted, in bytes.
    public var maximumPlaylistBytes: Int
    /// When to retry a failed request; a segment retries from the byte it reached.
    public var retry: HTTPClientRetryPolicy
    /// The least time between two progress events, and between two saves of the package state.
    public var progressInterval: Duration
    /// Adjacent byte ranges of one resource are merged into one request, cut into pieces of at least
    /// this many bytes when that lets several connections share a long run.
    public var minimumRangePieceBytes: Int64
    /// A live playlist that gains no segment for this long is taken as ended.
    public var liveStallTimeout: Duration
    /// When resuming, files an earlier run completed are checked with the server (a HEAD request
    /// each) against the ETag recorded with them; a file whose resource changed is fetched again.
    /// Without it (or without a recorded ETag), they are checked by length only.
    public var verifiesCompletedFiles: Bool
    /// Refuse a playlist with any violation of RFC 8216bis (`--strict`). Without it, a playlist is read as
    /// players read it, and what it breaks is reported once per playlist (``HLSDownloadEvent/playlistWarnings(url:warnings:)``).
    public var strictPlaylists = false
    /// Keys and an IV given by the user (`--key`, `--key-file`, `--iv`): a key file they cover is
    /// never fetched. They do not change the package id.
    public var userKeys = HLSUserKeys()
    /// Download DASH Representations under ContentProtection (CENC and other DRM) as they are,
    /// their ContentProtection kept in the package's MPD (`--keep-encrypted`); without it they
    /// are refused with ``HLSDownloadError/Kind-swift.struct/unsupportedEncryption``.
    public var keepEncrypted = false

    /// Creates options; the defaults are those of `streamkit download`.
    public init(
        connections: Int = 8, decrypt: Bool = false, skipBroken: Bool = false, gapTags: Bool = false,
        headers: HTTPHeaders = [:], liveDuration: Duration? = nil, maximumSegments: Int = 100_000,
        maximumPlaylistBytes: Int = 64 << 20,
        retry: HTTPClientRetryPolicy = .default, progressInterval: Duration = .milliseconds(250),
        minimumRangePieceBytes: Int64 = 1 << 20, liveStallTimeout: Duration = .seconds(60),
        verifiesCompletedFiles: Bool = true
    ) {
        precondition(connections >= 1, "at least one connection")
        self.connections = connections
        self.decrypt = decrypt
        self.skipBroken = skipBroken
        self.gapTags = gapTags
        self.headers = headers
        self.liveDuration = liveDuration
        self.maximumSegments = maximumSegments
        self.maximumPlaylistBytes = maximumPlaylistBytes
        self.retry = retry
        self.progressInterval = progressInterval
        self.minimumRangePieceBytes = minimumRangePieceBytes
        self.liveStallTimeout = liveStallTimeout
        self.verifiesCompletedFiles = verifiesCompletedFiles
    }
}

/// One HLS download: what to fetch, how, and where the package goes. A value, so that a queue can
/// store it and run it again; running it again resumes the package in ``packageDirectory``.
public struct HLSDownloadJob: Hashable, Sendable {
    /// The multivariant or media playlist URL (http or https).
    public var source: String
    /// Which variant and renditions.
    public var selection: HLSSelection
    /// Connections, decryption, failures, limits.
    public var options: HLSDownloadOptions
    /// The package folder: `index.m3u8`, `package.json` and one folder per rendition.
    public var packageDirectory: URL

    /// Creates a job.
    public init(
        source: String, selection: HLSSelection = HLSSelection(), options: HLSDownloadOptions = HLSDownloadOptions(),
        packageDirectory: URL
    ) {
        self.source = source
        self.selection = selection
        self.options = options
        self.packageDirectory = packageDirectory
    }

    /// The salt of ``packageID`` (``DownloadManager/idSalt(directory:)``); empty for none.
    public var idSalt = ""

    /// The title the user gave (`queue add --title`), kept in `package.json` for the library's
    /// page; not part of the package's identity.
    public var title: String?

    /// The package id: 16 hexadecimal digits of SHA-256 over the source URL, the selection words
    /// (time sections and excluded segment patterns included), whether segments are decrypted —
    /// what decides the package's content — and a salt. The same command gives the same id, so
    /// running it again resumes the same package; connections, rate limits, headers,
    /// `--skip-broken` and `--gap-tags` do not change it.
    ///
    /// - Parameters:
    ///   - source: The playlist URL as given.
    ///   - selection: The selection.
    ///   - decrypt: Whether AES-128 and SAMPLE-AES segments are stored decrypted.
    ///   - salt: A secret of the place the package is kept (``DownloadManager/idSalt(directory:)``),
    ///     so that the id cannot be told from the URL; empty for none.
    /// - Returns: The id, such as `3f2a9c1b7d4e5f60`.
    public static func packageID(source: String, selection: HLSSelection, decrypt: Bool, salt: String = "") -> String {
        let text =
            [
                "streamkit-hls-package-1", source, selection.variant.description, selection.audio.description,
                selection.subtitles.description, decrypt ? "decrypt" : "as-is",
            ].joined(separator: "\n")
            // A codec filter, sections, patterns and a salt join the identity only when given, so
            // older package ids stay the same.
            + (selection.codecs.isEmpty ? "" : "\ncodecs:" + selection.codecs.joined(separator: ","))
            + (selection.sections.isEmpty
                ? "" : "\nsections:" + selection.sections.map(\.description).joined(separator: ","))
            + selection.excludedSegments.map { "\nexclude:" + $0 }.joined()
            + (salt.isEmpty ? "" : "\nsalt:" + salt)
        return String(SHA256.hash(Array(text.utf8)).hexString.prefix(16))
    }

    /// This job's package id (see ``packageID(source:selection:decrypt:salt:)``), with ``idSalt``.
    public var packageID: String {
        Self.packageID(source: source, selection: selection, decrypt: options.decrypt, salt: idSalt)
    }
}
