/// Why the parser stopped reading a tag or the whole playlist.
struct ParseFailure: Error {
    var diagnostic: PlaylistDiagnostic
    /// The parse cannot go on (no header, invalid UTF-8, mixed playlist kinds), even in strict mode.
    var isFatal: Bool
}

/// Protocol features that need a minimum EXT-X-VERSION (RFC 8216bis §7).
enum VersionFeature: Int, CaseIterable {
    case iv, decimalDuration, byteRange, iFramesOnly, keyFormat, map, define, skip

    var minimumVersion: Int {
        switch self {
        case .iv: 2
        case .decimalDuration: 3
        case .byteRange, .iFramesOnly: 4
        case .keyFormat: 5
        case .map: 6
        case .define: 8
        case .skip: 9
        }
    }

    var description: String {
        switch self {
        case .iv: "the IV attribute of EXT-X-KEY"
        case .decimalDuration: "a decimal EXTINF duration"
        case .byteRange: "EXT-X-BYTERANGE"
        case .iFramesOnly: "EXT-X-I-FRAMES-ONLY"
        case .keyFormat: "KEYFORMAT or KEYFORMATVERSIONS"
        case .map: "EXT-X-MAP"
        case .define: "EXT-X-DEFINE"
        case .skip: "EXT-X-SKIP"
        }
    }
}

/// The tags of the segment being read, until its URI line arrives.
struct SegmentBuilder {
    var extinfLine = 0
    var duration = 0.0
    var byteRange: SegmentByteRange?
    var byteRangeLine = 0
    var programDateTime: HLSDateTime?
    var isDiscontinuity = false
    var isGap = false
    var annotations = SegmentAnnotations()
    /// The EXTINF and EXT-X-BYTERANGE lines as written, with how many unknown lines came before each: kept in
    /// place when the playlist ends before the segment's URI line.
    var writtenLines: [(index: Int, line: PlaylistLine)] = []
}

/// A one-pass, linear-time playlist parser over UTF-8 bytes (RFC 8216bis §4).
///
/// Lines are found by scanning for LF; tag names are matched as bytes; attribute lists are split into byte
/// ranges in a reused scratch array; numbers and dates are read from bytes. Strings are made only for values the
/// model keeps (URIs, quoted strings), and a URI equal to the previous one reuses its string.
struct PlaylistParser {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The same bytes, for helpers that read them (a plain value: calling them copies nothing).
    let text: PlaylistText
    let options: PlaylistParseOptions
    let isStrict: Bool
    let tagTable: KnownTagTable

    var lineNumber = 0
    /// Warnings (lenient) or violations (strict), in order.
    var diagnostics: [PlaylistDiagnostic] = []

    var sawHeader = false
    var kind: PlaylistKind?
    var kindLine = 0
    var kindTagName = ""
    var tagLines = [Int](repeating: 0, count: KnownTag.allCases.count)
    var featureLines = [Int](repeating: 0, count: VersionFeature.allCases.count)

    // Tags allowed in both kinds.
    var version: Int?
    var independentSegments = false
    var start: StartPoint?
    var definitions: [VariableDefinition] = []
    var variables: [String: String] = [:]
    var variableLines: [String: Int] = [:]
    /// Bytes variable substitution produced, and the most it may. Values are stored substituted, so a chain
    /// of definitions each referencing the previous one twice doubles at every line: a 2 KB
    /// playlist asked for gigabytes. Eight times the playlist, at least 16 MiB, is far more than
    /// any playlist substitutes (a token in every URI of a large playlist about doubles it).
    var substitutedBytes = 0
    var substitutionLimit: Int { max(16 << 20, bytes.count < Int.max / 8 ? bytes.count * 8 : Int.max) }
    var importLine = 0
    /// Unknown tags and comments read before the playlist kind was known.
    var earlyLines: [PlaylistLine] = []

    // Media playlist state.
    var media = MediaPlaylist()
    var segment = SegmentBuilder()
    var sawSegmentTag = false
    var previousRange: (uri: String, end: Int64)?
    var previousPartRange: (uri: String, end: Int64)?
    var previousURI: (range: Range<Int>, string: String)?
    var uncheckedDurations: [(line: Int, duration: Double)] = []
    /// Segments whose URI line had no EXTINF: they take the target duration once it is known.
    var segmentsWithoutDuration: [Int] = []
    var dateRangeIDs: Set<String> = []
    var firstDateRangeLine = 0
    var sawProgramDateTime = false
    var firstPartLine = 0

    // Multivariant playlist state.
    var multivariant = MultivariantPlaylist()
    /// An EXT-X-STREAM-INF waiting for its URI line, and its line (0 when none: checked on every line, so
    /// kept apart from the large value).
    var pendingVariant = VariantStream(uri: "", bandwidth: 0)
    var pendingVariantLine = 0
    var pendingLines: [PlaylistLine] = []
    var variantLines: [Int] = []
    var iFrameVariantLines: [Int] = []
    var programIDLine = 0

    /// Scratch space for the attribute list being read.
    var attributeSlots: [AttributeSlot] = []

    private static let sharedTagTable = KnownTagTable()

    init(bytes: UnsafeBufferPointer<UInt8>, options: PlaylistParseOptions) {
        self.bytes = bytes
        text = PlaylistText(bytes: bytes)
        self.options = options
        isStrict = options.strictness == .strict
        tagTable = Self.sharedTagTable
    }

    /// Parses `bytes`, returning the playlist and warnings or the error.
    static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, options: PlaylistParseOptions
    ) -> Result<
        ParsedPlaylist, PlaylistError
    > {
        var parser = PlaylistParser(bytes: bytes, options: options)
        do {
            let playlist = try parser.run()
            if parser.isStrict && !parser.diagnostics.isEmpty {
                return .failure(PlaylistError(diagnostics: parser.sortedDiagnostics()))
            }
            return .success(ParsedPlaylist(playlist: playlist, warnings: parser.sortedDiagnostics()))
        } catch {
            if parser.isStrict {
                parser.diagnostics.append(error.diagnostic)
                return .failure(PlaylistError(diagnostics: parser.sortedDiagnostics()))
            }
            return .failure(PlaylistError(diagnostics: [error.diagnostic]))
        }
    }

    /// The diagnostics in line order (checks made at the end report earlier lines); stable for equal lines.
    private func sortedDiagnostics() -> [PlaylistDiagnostic] {
        if zip(diagnostics, diagnostics.dropFirst()).allSatisfy({ $0.line <= $1.line }) { return diagnostics }
        return diagnostics.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }.map(
            \.element)
    }

    // MARK: Diagnostics

    /// A problem that stops the current tag (and the parse, in lenient mode or when `fatal`).
    func failure(_ reason: String, line: Int? = nil, fatal: Bool = false) -> ParseFailure {
        ParseFailure(diagnostic: PlaylistDiagnostic(line: line ?? lineNumber, reason: reason), isFatal: fatal)
    }

    /// Something tolerated: a warning in lenient mode, a violation in strict mode.
    mutating func warn(_ reason: String, line: Int? = nil) {
        diagnostics.append(PlaylistDiagnostic(line: line ?? lineNumber, reason: reason))
    }

    /// Records a failure that need not stop a strict parse, or throws it.
    mutating func report(_ failure: ParseFailure) throws(ParseFailure) {
        if isStrict && !failure.isFatal {
            diagnostics.append(failure.diagnostic)
        } else {
            throw failure
        }
    }

    mutating func require(_ feature: VersionFeature, line: Int? = nil) {
        if featureLines[feature.rawValue] == 0 { featureLines[feature.rawValue] = line ?? lineNumber }
    }

    // MARK: Lines

    mutating func run() throws(ParseFailure) -> Playlist {
        if let offset = UTF8Validation.firstInvalidByte(in: bytes) {
            let line = bytes[..<offset].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
            var lineStart = offset
            while lineStart > 0 && bytes[lineStart - 1] != 0x0A { lineStart -= 1 }
            throw failure(
                "invalid UTF-8 (byte 0x\(String(bytes[offset], radix: 16, uppercase: true)) at column "
                    + "\(offset - lineStart + 1))", line: line, fatal: true)
        }
        var position = 0
        let count = bytes.count
        if count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            warn("byte order mark before #EXTM3U (RFC 8216bis §4.1 forbids it)", line: 1)
            position = 3
        }
        while position < count {
            lineNumber += 1
            let lineStart = position
            var lineEnd = WordScan.firstControlCharacter(in: bytes, from: position, to: count)
            var hasControlCharacter = false
            while lineEnd < count && bytes[lineEnd] != 0x0A {
                hasControlCharacter = true
                lineEnd = WordScan.first(0x0A, in: bytes, from: lineEnd, to: count)
            }
            position = lineEnd + 1
            if lineEnd > lineStart && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            do {
                try processLine(lineStart..<lineEnd, hasControlCharacter: hasControlCharacter)
            } catch {
                try report(error)
            }
        }
        return try finish()
    }

    private mutating func processLine(_ line: Range<Int>, hasControlCharacter: Bool) throws(ParseFailure) {
        var start = line.lowerBound
        var end = line.upperBound
        if hasControlCharacter { try checkControlCharacters(line) }
        while end > start && isSpaceOrTab(bytes[end - 1]) { end -= 1 }
        if start == end {
            if end < line.upperBound { warn("line holds only whitespace") }
            if !sawHeader { warn("blank line before #EXTM3U") }
            return
        }
        if end < line.upperBound { warn("trailing whitespace") }
        while isSpaceOrTab(bytes[start]) { start += 1 }
        if start > line.lowerBound { warn("leading whitespace") }
        if bytes[start] == UInt8(ascii: "#") {
            if end - start >= 4 && bytes[start + 1] | 0x20 == UInt8(ascii: "e")
                && bytes[start + 2] | 0x20 == UInt8(ascii: "x")
                && bytes[start + 3] | 0x20 == UInt8(ascii: "t")
            {
                try processTag(start..<end)
            } else {
                try keepLine(start..<end)
            }
        } else {
            try processURI(start..<end)
        }
    }

    /// RFC 8216bis §4.1: no control characters but the line ends. A carriage return inside a line is an error
    /// (it would end the line for some readers and not for others); tabs count as whitespace.
    private mutating func checkControlCharacters(_ line: Range<Int>) throws(ParseFailure) {
        var warned = false
        for index in line where bytes[index] < 0x20 {
            let byte = bytes[index]
            if byte == 0x09 { continue }
            if byte == 0x0D { throw failure("carriage return inside a line (lines end with LF or CRLF)") }
            if !warned {
                warn("control character 0x\(String(byte, radix: 16, uppercase: true)) (RFC 8216bis §4.1 forbids them)")
                warned = true
            }
        }
    }

    /// A comment or unknown tag: kept in place.
    private mutating func keepLine(_ range: Range<Int>) throws(ParseFailure) {
        if !sawHeader {
            guard !(bytes[range.lowerBound + 1..<range.upperBound].starts(with: "EXT".utf8)) else {
                throw failure("the playlist does not start with #EXTM3U", fatal: true)
            }
            warn("comment before #EXTM3U (RFC 8216bis §4.1: the first line must be #EXTM3U)")
        }
        let line = PlaylistLine(text.string(range))
        switch kind {
        case nil: earlyLines.append(line)
        case .media:
            if sawSegmentTag {
                segment.annotations.extraLines.append(line)
            } else {
                media.headerLines.append(line)
            }
        case .multivariant: pendingLines.append(line)
        }
    }

    private mutating func processURI(_ range: Range<Int>) throws(ParseFailure) {
        guard sawHeader else { throw failure("the playlist does not start with #EXTM3U", fatal: true) }
        if pendingVariantLine != 0 {
            let line = pendingVariantLine
            pendingVariantLine = 0
            var variant = pendingVariant
            variant.uri = try substitutedString(range, what: "URI line")
            placePendingLines(.beforeVariant(multivariant.variants.count))
            multivariant.variants.append(variant)
            variantLines.append(line)
            return
        }
        if kind == .multivariant {
            warn("URI line without an EXT-X-STREAM-INF tag before it; the line is ignored")
            return
        }
        if kind == nil {
            kind = .media
            kindLine = lineNumber
            kindTagName = "a URI line"
            adoptEarlyLines()
        }
        try finishSegment(uriRange: range)
    }

    private mutating func processTag(_ range: Range<Int>) throws(ParseFailure) {
        let colon = WordScan.first(UInt8(ascii: ":"), in: bytes, from: range.lowerBound + 1, to: range.upperBound)
        let nameRange = (range.lowerBound + 1)..<colon
        var found = tagTable.tag(in: bytes, nameRange, ignoringCase: false)
        if found == nil, let tag = tagTable.tag(in: bytes, nameRange, ignoringCase: true) {
            warn("tag name \(text.string(nameRange)) is not upper-case")
            found = tag
        }
        guard let tag = found else {
            try keepLine(range)
            return
        }
        let value = colon < range.upperBound ? (colon + 1)..<range.upperBound : range.upperBound..<range.upperBound
        if !sawHeader {
            guard tag == .extm3u else { throw failure("the playlist does not start with #EXTM3U", fatal: true) }
            sawHeader = true
            tagLines[tag.rawValue] = lineNumber
            if colon < range.upperBound { warn("#EXTM3U takes no value") }
            return
        }
        if pendingVariantLine != 0 {
            let line = pendingVariantLine
            pendingVariantLine = 0
            warn(
                "EXT-X-STREAM-INF is not followed by a URI line (\(tag.name) comes first); the variant is ignored",
                line: line)
        }
        if let tagKind = tag.playlistKind, tagKind != kind {
            guard decideKind(tagKind, tag: tag, end: range.upperBound) else { return }
        }
        if tag.isSingleInstance {
            let first = tagLines[tag.rawValue]
            if first != 0 {
                warn("\(tag.name) appears again (first at line \(first)); the tag is ignored")
                return
            }
        }
        if tagLines[tag.rawValue] == 0 { tagLines[tag.rawValue] = lineNumber }
        if tag.takesNoValue && colon < range.upperBound {
            warn("\(tag.name) takes no value; '\(text.string(value))' ignored")
        }
        let sawSegmentTagBefore = sawSegmentTag
        do throws(ParseFailure) {
            if !tag.takesNoValue && colon == range.upperBound {
                throw failure("\(tag.name) needs a value after a colon")
            }
            try read(tag, value)
            if tag == .extinf || tag == .byteRange {
                segment.writtenLines.append((segment.annotations.extraLines.count, PlaylistLine(text.string(range))))
            }
        } catch {
            if error.isFatal { throw error }
            // An ignored tag is not written back: it must not decide where the lines after it belong.
            if tag.recovery == .ignore { sawSegmentTag = sawSegmentTagBefore }
            try recover(from: error, tag: tag, line: range)
        }
    }

    /// A tag that could not be read: what its ``KnownTag/recovery`` says, with a warning naming the line.
    private mutating func recover(from failure: ParseFailure, tag: KnownTag, line: Range<Int>) throws(ParseFailure) {
        let diagnostic = failure.diagnostic
        switch tag.recovery {
        case .fail: try report(failure)
        case .ignore: warn(diagnostic.reason + "; the tag is ignored", line: diagnostic.line)
        case .keepAsWritten:
            warn(diagnostic.reason + "; the tag is kept as written", line: diagnostic.line)
            try keepLine(line)
        }
    }

    private mutating func read(_ tag: KnownTag, _ value: Range<Int>) throws(ParseFailure) {
        switch tag {
        case .extm3u: warn("#EXTM3U appears again (first at line \(tagLines[tag.rawValue]))")
        case .version: try readVersion(value)
        case .independentSegments: independentSegments = true
        case .start: try readStart(value)
        case .define: try readDefine(value)
        case .targetDuration: try readTargetDuration(value)
        case .mediaSequence: try readMediaSequence(value)
        case .discontinuitySequence: try readDiscontinuitySequence(value)
        case .endList: media.hasEndList = true
        case .playlistType: try readPlaylistType(value)
        case .iFramesOnly:
            media.iFramesOnly = true
            require(.iFramesOnly)
        case .partInformation: try readPartInformation(value)
        case .serverControl: try readServerControl(value)
        case .extinf: try readEXTINF(value)
        case .byteRange: try readByteRange(value)
        case .discontinuity:
            sawSegmentTag = true
            if segment.isDiscontinuity { warn("EXT-X-DISCONTINUITY appears twice before one segment") }
            segment.isDiscontinuity = true
        case .key: try readKey(value)
        case .map: try readMap(value)
        case .programDateTime: try readProgramDateTime(value)
        case .gap:
            sawSegmentTag = true
            segment.isGap = true
        case .bitrate: try readBitrate(value)
        case .part: try readPart(value)
        case .dateRange: try readDateRange(value)
        case .skip: try readSkip(value)
        case .preloadHint: try readPreloadHint(value)
        case .renditionReport: try readRenditionReport(value)
        case .media: try readRendition(value)
        case .streamInf: try readStreamInf(value)
        case .iFrameStreamInf: try readIFrameStreamInf(value)
        case .sessionData: try readSessionData(value)
        case .sessionKey: try readSessionKey(value)
        case .contentSteering: try readContentSteering(value)
        }
    }

    /// Whether a tag of `tagKind` belongs here. The first such tag decides the playlist's kind, unless a later
    /// tag that alone says which kind it is (``KnownTag/decidesPlaylistKind``) says otherwise: media playlists
    /// carry EXT-X-SESSION-KEY in the wild. A tag of the other kind is ignored with a warning.
    private mutating func decideKind(_ tagKind: PlaylistKind, tag: KnownTag, end: Int) -> Bool {
        if kind == nil {
            if !tag.decidesPlaylistKind, let decisive = firstDecisiveTag(after: end) {
                kind = decisive.kind
                kindLine = decisive.line
                kindTagName = decisive.name
            } else {
                kind = tagKind
                kindLine = lineNumber
                kindTagName = tag.name
            }
            adoptEarlyLines()
        }
        guard let kind, kind != tagKind else { return true }
        warn(
            "\(tag.name) belongs in a \(tagKind.name) playlist, but \(kindTagName) at line \(kindLine) "
                + "makes this a \(kind.name) playlist; the tag is ignored")
        return false
    }

    /// The first tag after byte `end` that alone says which kind of playlist this is, with its line.
    private func firstDecisiveTag(after end: Int) -> (kind: PlaylistKind, line: Int, name: String)? {
        var position = end
        var line = lineNumber
        let count = bytes.count
        while position < count {
            position = WordScan.first(0x0A, in: bytes, from: position, to: count) + 1
            line += 1
            guard position < count, bytes[position] == UInt8(ascii: "#") else { continue }
            let colon = WordScan.first(UInt8(ascii: ":"), in: bytes, from: position + 1, to: min(count, position + 32))
            guard let tag = tagTable.tag(in: bytes, (position + 1)..<colon, ignoringCase: false),
                tag.decidesPlaylistKind, let kind = tag.playlistKind
            else { continue }
            return (kind, line, tag.name)
        }
        return nil
    }

    /// Files the lines read before the playlist's kind was known where that kind keeps them.
    private mutating func adoptEarlyLines() {
        switch kind {
        case .media: media.headerLines = earlyLines
        case .multivariant: pendingLines = earlyLines
        case nil: return
        }
        earlyLines = []
    }

    /// Files the lines read since the last multivariant element before the element about to be added.
    mutating func placePendingLines(_ position: PlacedLine.Position) {
        guard !pendingLines.isEmpty else { return }
        multivariant.extraLines += pendingLines.map { PlacedLine($0, position: position) }
        pendingLines = []
    }

    // MARK: Bytes

    /// `range` trimmed, with a warning when there was whitespace to trim.
    mutating func trimmedWarning(_ range: Range<Int>, _ what: @autoclosure () -> String) -> Range<Int> {
        let result = text.trimmed(range)
        if result != range { warn("whitespace around \(what())") }
        return result
    }
}
