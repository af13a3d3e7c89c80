import Foundation

/// A problem found in a playlist, with the line it is on (1-based; the line of the tag or URI at fault).
public struct PlaylistDiagnostic: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 1-based line number.
    public var line: Int
    /// What is wrong, in words.
    public var reason: String

    /// Creates a diagnostic.
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    /// `line N: reason`.
    public var description: String { "line \(line): \(reason)" }
}

/// Why a playlist could not be parsed: the line and reason of the first error, and in strict mode every
/// violation found.
public struct PlaylistError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Every problem reported, in line order; never empty. In lenient mode, the one error that stopped parsing.
    public let diagnostics: [PlaylistDiagnostic]

    /// Creates an error from its diagnostics (at least one).
    public init(diagnostics: [PlaylistDiagnostic]) {
        precondition(!diagnostics.isEmpty, "a playlist error needs a diagnostic")
        self.diagnostics = diagnostics
    }

    /// The line of the first problem.
    public var line: Int { diagnostics[0].line }
    /// The reason of the first problem.
    public var reason: String { diagnostics[0].reason }

    /// `line N: reason`, and how many more problems there are.
    public var description: String {
        diagnostics.count == 1
            ? diagnostics[0].description
            : "\(diagnostics[0]) (and \(diagnostics.count - 1) more violation\(diagnostics.count == 2 ? "" : "s"))"
    }
}

/// How to parse a playlist.
public struct PlaylistParseOptions: Sendable {
    /// What to do with input that breaks the specification.
    public enum Strictness: Sendable, Hashable {
        /// Accept what real servers emit (a byte order mark, stray whitespace, lower-case attribute names, lines
        /// before `#EXTM3U`, missing EXTINF commas, version mismatches…) and report each as a warning. Input whose
        /// meaning is unclear is still an error.
        case lenient
        /// Report every violation of RFC 8216bis with its line and reason, and fail if there is any.
        case strict
    }

    /// Lenient (the default) or strict.
    public var strictness: Strictness
    /// The URL the playlist was loaded from: EXT-X-DEFINE `QUERYPARAM` reads its query. Relative URIs are
    /// resolved separately (``MediaPlaylist/resolvedSegments(baseURL:)``, ``resolveURI(_:against:)``).
    public var playlistURL: URL?
    /// The variables of the multivariant playlist that referred to this media playlist, for EXT-X-DEFINE `IMPORT`.
    public var importedVariables: [String: String]

    /// Creates options.
    public init(strictness: Strictness = .lenient, playlistURL: URL? = nil, importedVariables: [String: String] = [:]) {
        self.strictness = strictness
        self.playlistURL = playlistURL
        self.importedVariables = importedVariables
    }

    /// Lenient parsing with no URL and no imported variables.
    public static let lenient = PlaylistParseOptions()
    /// Strict parsing with no URL and no imported variables.
    public static let strict = PlaylistParseOptions(strictness: .strict)
}

/// A parsed playlist and the warnings a lenient parse collected.
public struct ParsedPlaylist: Hashable, Sendable {
    /// The playlist.
    public var playlist: Playlist
    /// What the lenient parse tolerated, with line numbers (always empty in strict mode, which fails instead).
    public var warnings: [PlaylistDiagnostic]

    /// Creates a parse result.
    public init(playlist: Playlist, warnings: [PlaylistDiagnostic]) {
        self.playlist = playlist
        self.warnings = warnings
    }

    /// The variables the playlist defined, for parsing the media playlists it refers to (EXT-X-DEFINE `IMPORT`).
    public var variables: [String: String] {
        let definitions =
            switch playlist {
            case .media(let media): media.definitions
            case .multivariant(let multivariant): multivariant.definitions
            }
        return Dictionary(definitions.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

extension Playlist {
    /// Parses a playlist from its bytes (UTF-8; a byte order mark and CRLF line ends are accepted).
    ///
    /// Runs in time linear in the input, whatever the input. A playlist is multivariant when it has
    /// EXT-X-STREAM-INF, EXT-X-I-FRAME-STREAM-INF, EXT-X-MEDIA, EXT-X-SESSION-DATA, EXT-X-SESSION-KEY or
    /// EXT-X-CONTENT-STEERING tags, and a media playlist otherwise (RFC 8216bis §4.1).
    ///
    /// - Parameters:
    ///   - bytes: The playlist file.
    ///   - options: Strictness, and the inputs EXT-X-DEFINE needs.
    /// - Returns: The playlist and the warnings of a lenient parse.
    /// - Throws: ``PlaylistError`` naming the line and reason (every violation, in strict mode).
    public static func parse(
        _ bytes: some Collection<UInt8>, options: PlaylistParseOptions = .lenient
    ) throws(PlaylistError) -> ParsedPlaylist {
        let result: Result<ParsedPlaylist, PlaylistError>
        if let contiguous = bytes.withContiguousStorageIfAvailable({ PlaylistParser.parse($0, options: options) }) {
            result = contiguous
        } else {
            result = Array(bytes).withUnsafeBufferPointer { PlaylistParser.parse($0, options: options) }
        }
        return try result.get()
    }

    /// Parses a playlist from text (see ``parse(_:options:)-(Collection<UInt8>,_)``).
    public static func parse(
        _ text: String, options: PlaylistParseOptions = .lenient
    ) throws(PlaylistError)
        -> ParsedPlaylist
    {
        var text = text
        return try text.withUTF8 { PlaylistParser.parse($0, options: options) }.get()
    }
}
