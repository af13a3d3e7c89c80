import Foundation
import StreamKitCore
import StreamKitHLS

/// How a file is decrypted after download (`--decrypt`): AES-128 files, SAMPLE-AES MPEG-TS
/// segments, SAMPLE-AES fragmented MP4 (`cbcs`) segments and their init segments.
struct Decryption: Hashable, Sendable {
    /// What the key encrypts.
    enum Scheme: Hashable, Sendable {
        /// `METHOD=AES-128`: the whole file, CBC with PKCS#7 padding.
        case wholeFile
        /// `METHOD=SAMPLE-AES` in MPEG-TS: the media samples (``SampleAESTransportStream``).
        case sampleAES
        /// `METHOD=SAMPLE-AES` in fragmented MP4: the samples of a media segment, protected as the
        /// init segment at `initURL` (its `initRange`) declares (``MP4Protection``).
        case sampleAESMP4(initURL: String, initRange: ByteRange?)
        /// The init segment of SAMPLE-AES fragmented MP4: nothing encrypted, its protected sample
        /// entries rewritten as clear ones (``MP4Protection/clearInitSegment(_:)``).
        case clearMP4Init
    }

    /// The package path of the key file.
    var keyPath: String
    /// The 16-byte IV.
    var iv: [UInt8]
    var scheme: Scheme = .wholeFile
}

/// An immutable value on the heap: what a type held per segment or per file keeps of a value
/// that few of them have, or that runs of them share, costs a reference.
final class Boxed<Value: Hashable & Sendable>: Hashable, Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }

    static func == (lhs: Boxed, rhs: Boxed) -> Bool { lhs === rhs || lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// A file of the package and where its bytes come from.
struct PlannedFile: Hashable, Sendable {
    /// What the file holds.
    enum Kind: String, Hashable, Sendable, Codable {
        case segment, map, key
    }

    // Stored in an order that leaves no padding between them, with the counts in 32 bits: a
    // download holds a planned file per segment (104 bytes each before, 88 now).

    /// The path relative to the package folder, made by ``PackageLayout``.
    var path: String
    /// The remote resource (absolute http or https; for a key, possibly a `data:` URI).
    var url: String { source.absolute }
    private var source: SourceURI
    /// `nil`: the whole resource. Otherwise the byte ranges of the resource the playlist uses
    /// (segments and maps, sorted, possibly adjacent or overlapping), fetched with Range requests.
    var parts: [ByteRange]?
    /// Held by reference: few files have one, and a download holds a planned file per segment.
    private var decryptionBox: Boxed<Decryption>?
    /// Seconds from the start of the rendition of its first segment (for ordering).
    var startTime: Double
    /// Seconds of media it carries (segments only).
    var duration: Double
    private var renditionIndex: Int32
    private var unitCount: Int32
    /// What it holds.
    var kind: Kind
    /// Whether the single range in ``parts`` is written from offset 0 (a file of its own) rather
    /// than at its offset in the resource (a single local file shared by several ranges).
    var rebased: Bool

    /// The rendition it belongs to (index into the engine's renditions).
    var rendition: Int {
        get { Int(renditionIndex) }
        set { renditionIndex = Int32(newValue) }
    }

    /// Segments and maps it holds, for progress (a single local file holds many).
    var units: Int {
        get { Int(unitCount) }
        set { unitCount = Int32(newValue) }
    }

    /// AES-128 to undo after download.
    var decryption: Decryption? {
        get { decryptionBox?.value }
        set { decryptionBox = newValue.map(Boxed.init) }
    }

    init(
        path: String, kind: Kind, source: SourceURI, parts: [ByteRange]?, rebased: Bool, decryption: Decryption?,
        rendition: Int, startTime: Double, duration: Double, units: Int
    ) {
        self.path = path
        self.source = source
        self.parts = parts
        self.decryptionBox = decryption.map(Boxed.init)
        self.startTime = startTime
        self.duration = duration
        self.renditionIndex = Int32(rendition)
        self.unitCount = Int32(units)
        self.kind = kind
        self.rebased = rebased
    }

    /// The bytes the ranges cover, when the file is made of ranges.
    var rangedLength: Int64? {
        guard let parts else { return nil }
        return ByteRangeSet(parts).byteCount
    }
}

/// What a planning adds: files (keys, which come first, and the rest) and recorded segments.
struct RenditionPlanning: Sendable {
    var keyFiles: [PlannedFile] = []
    var files = ChunkedArray<PlannedFile>()
    var segments = ChunkedArray<RecordedSegment>()
    /// Resource URL → index in ``files`` of the file its ranges share.
    fileprivate var sharedFiles: [String: Int] = [:]
    /// The files of whole resources (a URL, a range and an IV) in ``files``, by the resource's
    /// hash, so that a VOD playlist listing a resource twice fetches it once. Indices only, not the
    /// URL again: a long playlist holds one per segment while it is planned.
    fileprivate var wholeFiles = IndexTable()
}

/// Turns a rendition's segments into package files and local references. Pure and deterministic:
/// the same segments in the same order give the same names, so a resumed download finds its files.
struct RenditionPlanner: Sendable {
    let rendition: Int
    let folder: String
    let role: RenditionRole
    let decrypt: Bool
    /// Whether byte ranges of one resource share one local file (VOD without `--decrypt`); otherwise
    /// each ranged segment is a file of its own.
    let sharesRangedFiles: Bool
    /// The IV of every AES-128 key, given by the user (``HLSUserKeys/iv``).
    let iv: [UInt8]?

    private var keyPaths: [String: String] = [:]
    private var mapReferences: [String: (path: String, reference: LocalReference)] = [:]
    /// The AES-128 key a map kept encrypted needs in effect where the local playlist writes it.
    private var mapKeys: [String: [EncryptionKey]] = [:]
    private var nextKey = 0
    private var nextMap = 0
    private var nextSharedFile = 0
    /// The context of the last segment planned, given again to the next while it is equal.
    private var lastContext = SegmentContext.none
    /// The URL of the playlist the last segment came from, which its URI was resolved against.
    private var base: PlaylistBase?
    /// The next local media sequence number.
    private(set) var nextLocalSequence: UInt64?

    init(
        rendition: Int, folder: String, role: RenditionRole, decrypt: Bool, sharesRangedFiles: Bool,
        iv: [UInt8]? = nil
    ) {
        self.rendition = rendition
        self.folder = folder
        self.role = role
        self.decrypt = decrypt
        self.sharesRangedFiles = sharesRangedFiles
        self.iv = iv
    }

    /// Plans `entries` (segments in playlist order, following whatever was planned before).
    ///
    /// - Parameters:
    ///   - entries: Each segment as written and as resolved (absolute URIs).
    ///   - exclusions: Why each entry (by position) is left out of the package, if it is; empty when
    ///     none is. A left-out entry is recorded with no file, and its keys and map are not planned.
    ///   - playlistURL: For error messages.
    /// - Returns: The new files (keys first) and the recorded segments.
    /// - Throws: ``HLSDownloadError`` `unsupportedURI` for a URI that is not http or https.
    mutating func plan(
        _ entries: [(segment: MediaSegment, resolved: ResolvedSegment)],
        exclusions: [SegmentFilter.Exclusion?] = [], playlistURL: String
    ) throws(HLSDownloadError) -> (files: [PlannedFile], segments: ChunkedArray<RecordedSegment>) {
        var planning = RenditionPlanning()
        for (position, (segment, resolved)) in entries.enumerated() {
            try add(
                segment, resolved, exclusion: position < exclusions.count ? exclusions[position] : nil,
                to: &planning, playlistURL: playlistURL)
        }
        finish(&planning)
        return (planning.keyFiles + Array(planning.files), planning.segments)
    }

    /// Plans one more segment into `planning`, following whatever was planned before: a long
    /// playlist is planned as it is resolved, without an array of its resolved segments.
    ///
    /// - Parameters:
    ///   - segment: The segment as written.
    ///   - original: The segment as resolved (absolute URIs).
    ///   - exclusion: Why the selection leaves it out, if it does: it is recorded with no file,
    ///     and its keys and map are not planned.
    ///   - playlistURL: For error messages.
    /// - Throws: ``HLSDownloadError`` `unsupportedURI` for a URI that is not http or https.
    mutating func add(
        _ segment: MediaSegment, _ original: ResolvedSegment, exclusion: SegmentFilter.Exclusion?,
        to planning: inout RenditionPlanning, playlistURL: String
    ) throws(HLSDownloadError) {
        func check(_ url: String, what: String) throws(HLSDownloadError) {
            guard Self.isFetchable(url) else {
                throw HLSDownloadError(
                    .unsupportedURI, url: url,
                    detail: "\(what) in \(playlistURL) is not an http or https URL; it is not fetched")
            }
        }

        let resolved = HLSUserKeys.overridingIV(iv, in: Self.normalized(original))
        if base?.url != playlistURL { base = PlaylistBase(url: playlistURL) }
        let source = SourceURI(absolute: resolved.uri, written: segment.uri, base: base!)
        let localSequence = nextLocalSequence ?? resolved.mediaSequence
        nextLocalSequence = localSequence &+ 1
        if let exclusion {
            planning.segments.append(
                RecordedSegment(
                    segment: segment, resolved: resolved, source: source, localSequence: localSequence, file: nil,
                    local: LocalReference(uri: "", range: nil),
                    context: context(
                        SegmentContext(
                            keys: Self.shared(resolved.keys), map: resolved.map, mapFile: nil, localMap: nil,
                            localKeys: [],
                            localMapKeys: [])),
                    excluded: exclusion))
            return
        }

        /// The package file of identity key `uri` (planned at its first use).
        func keyFile(_ uri: String) -> String {
            if let known = keyPaths[uri] { return known }
            let path = folder + "/" + "key-\(nextKey).key"
            nextKey += 1
            keyPaths[uri] = path
            planning.keyFiles.append(
                PlannedFile(
                    path: path, kind: .key, source: SourceURI(absolute: uri), parts: nil, rebased: false,
                    decryption: nil,
                    rendition: rendition, startTime: resolved.startTime, duration: 0, units: 1))
            return path
        }

        // Keys: identity keys are fetched and stored; other key formats (DRM) are kept as written.
        var localKeys: [EncryptionKey] = []
        var decryption: Decryption?
        for key in resolved.keys where key.method != .noEncryption {
            guard let uri = key.uri else { continue }
            var written = EncryptionKey(
                method: key.method, uri: uri, iv: key.isIVExplicit ? key.iv : nil,
                keyFormat: key.keyFormat == "identity" ? nil : key.keyFormat,
                keyFormatVersions: key.keyFormatVersions)
            guard key.keyFormat == "identity" else {
                localKeys.append(written)
                continue
            }
            guard Self.isFetchable(uri) || uri.lowercased().hasPrefix("data:") else {
                try check(uri, what: "the key of segment \(resolved.mediaSequence)")
                continue
            }
            let path = keyFile(uri)
            if decrypt && key.method == .aes128 {
                decryption = Decryption(keyPath: path, iv: key.iv)
                continue
            }
            if decrypt && key.method == .sampleAES {
                // With a map the samples are fragmented MP4 (`cbcs`), protected as the map says.
                let scheme: Decryption.Scheme =
                    resolved.map.map { .sampleAESMP4(initURL: $0.uri, initRange: $0.byteRange) } ?? .sampleAES
                decryption = Decryption(keyPath: path, iv: key.iv, scheme: scheme)
                continue
            }
            written.uri = Self.name(of: path)
            localKeys.append(written)
        }

        // The map.
        var mapFile: String?
        var localMap: LocalReference?
        if let map = resolved.map {
            try check(map.uri, what: "the map of segment \(resolved.mediaSequence)")
            let identity = map.uri + "#" + (map.byteRange?.description ?? "")
            if let known = mapReferences[identity] {
                mapFile = known.path
                localMap = known.reference
            } else {
                let ext = PackageLayout.fileExtension(forURI: map.uri, fallback: "mp4")
                // A map is encrypted by the AES-128 key in effect where it was written, which
                // must have an explicit IV (RFC 8216bis §4.4.4.4, §4.4.4.5): that key, not the
                // segment's (a key written after the map does not apply to it).
                var mapDecryption: Decryption?
                if let segmentDecryption = decryption, case .sampleAESMP4 = segmentDecryption.scheme {
                    // The init of SAMPLE-AES fMP4 is clear: only its sample entries are rewritten.
                    mapDecryption = Decryption(
                        keyPath: segmentDecryption.keyPath, iv: segmentDecryption.iv, scheme: .clearMP4Init)
                } else if let key = map.identityKey, key.method == .aes128, key.isIVExplicit, let uri = key.uri {
                    if !uri.lowercased().hasPrefix("data:") {
                        try check(uri, what: "the key of the map of segment \(resolved.mediaSequence)")
                    }
                    let path = keyFile(uri)
                    if decrypt {
                        mapDecryption = Decryption(keyPath: path, iv: key.iv)
                    } else {
                        mapKeys[identity] = [
                            EncryptionKey(method: .aes128, uri: Self.name(of: path), iv: key.iv)
                        ]
                    }
                }
                if let range = map.byteRange, sharesRangedFiles, mapDecryption == nil {
                    let index = sharedFileIndex(
                        for: map.uri, ext: ext, in: &planning.files, shared: &planning.sharedFiles, resolved: resolved)
                    planning.files[index].parts!.append(range)
                    planning.files[index].units += 1
                    mapFile = planning.files[index].path
                    localMap = LocalReference(uri: Self.name(of: planning.files[index].path), range: range)
                } else {
                    let path = folder + "/" + "init-\(nextMap).\(ext)"
                    nextMap += 1
                    planning.files.append(
                        PlannedFile(
                            path: path, kind: .map, source: SourceURI(absolute: map.uri),
                            parts: map.byteRange.map { [$0] },
                            rebased: map.byteRange != nil, decryption: mapDecryption, rendition: rendition,
                            startTime: resolved.startTime, duration: 0, units: 1))
                    mapFile = path
                    localMap = LocalReference(uri: Self.name(of: path), range: nil)
                }
                mapReferences[identity] = (mapFile!, localMap!)
            }
        }

        // The segment.
        let fallback = role == .subtitles ? "vtt" : (resolved.map == nil ? "ts" : "m4s")
        let ext = PackageLayout.fileExtension(forURI: resolved.uri, fallback: fallback)
        let ownName = PackageLayout.numberedName(localSequence, extension: ext)
        var file: String?
        var local = LocalReference(uri: ownName, range: nil)
        if resolved.isGap {
            // Listed as missing by the source: nothing to fetch; the local entry stays a gap.
        } else if let range = resolved.byteRange, sharesRangedFiles, decryption == nil {
            try check(resolved.uri, what: "segment \(resolved.mediaSequence)")
            let index = sharedFileIndex(
                for: resolved.uri, ext: ext, in: &planning.files, shared: &planning.sharedFiles, resolved: resolved)
            planning.files[index].parts!.append(range)
            planning.files[index].units += 1
            planning.files[index].duration += resolved.duration
            file = planning.files[index].path
            local = LocalReference(uri: Self.name(of: planning.files[index].path), range: range)
        } else {
            try check(resolved.uri, what: "segment \(resolved.mediaSequence)")
            // In VOD one URL is one resource; a live server may reuse names for new segments,
            // so a live recording neither looks a segment up nor keeps its name (a day's
            // recording would hold every segment's URL twice).
            let resource = WholeResource(url: resolved.uri, range: resolved.byteRange, iv: decryption?.iv)
            let identity = sharesRangedFiles ? resource.hashValue : nil
            // The files are read in place: a copy of them alive at the append below would make
            // it copy the chunk it writes to.
            if let identity,
                let index = planning.wholeFiles.first(
                    hash: identity, where: { resource.isHeld(by: planning.files[$0]) })
            {
                file = planning.files[index].path
                local = LocalReference(uri: Self.name(of: planning.files[index].path), range: nil)
            } else {
                let path = folder + "/" + ownName
                if let identity {
                    planning.wholeFiles.insert(planning.files.count, hash: identity) {
                        WholeResource(of: planning.files[$0]).hashValue
                    }
                }
                planning.files.append(
                    PlannedFile(
                        path: path, kind: .segment, source: source, parts: resolved.byteRange.map { [$0] },
                        rebased: resolved.byteRange != nil, decryption: decryption, rendition: rendition,
                        startTime: resolved.startTime, duration: resolved.duration, units: 1))
                file = path
            }
        }
        let shared = context(
            SegmentContext(
                keys: Self.shared(resolved.keys), map: resolved.map, mapFile: mapFile, localMap: localMap,
                localKeys: localKeys,
                localMapKeys: resolved.map.flatMap { mapKeys[$0.uri + "#" + ($0.byteRange?.description ?? "")] }
                    ?? []))
        planning.segments.append(
            RecordedSegment(
                segment: segment, resolved: resolved, source: source, localSequence: localSequence, file: file,
                local: local,
                context: shared))
    }

    /// The keys a ``SegmentContext`` holds: without the IVs taken from the media sequence number.
    private static func shared(_ keys: [ResolvedKey]) -> [ResolvedKey] {
        guard keys.contains(where: { !$0.isIVExplicit }) else { return keys }
        return keys.map { key in
            var key = key
            if !key.isIVExplicit { key.iv = [] }
            return key
        }
    }

    /// `context`, or the last segment's when equal to it (the object the segments share).
    private mutating func context(_ context: SegmentContext) -> SegmentContext {
        if context != lastContext { lastContext = context }
        return lastContext
    }

    /// Ends a planning: the ranges of each shared file in order.
    func finish(_ planning: inout RenditionPlanning) {
        for index in planning.files.indices where planning.files[index].parts != nil && !planning.files[index].rebased {
            planning.files[index].parts!.sort { ($0.lowerBound, $0.upperBound) < ($1.lowerBound, $1.upperBound) }
        }
    }

    private mutating func sharedFileIndex(
        for url: String, ext: String, in files: inout ChunkedArray<PlannedFile>, shared: inout [String: Int],
        resolved: ResolvedSegment
    ) -> Int {
        if let index = shared[url] { return index }
        let path = folder + "/" + "media-\(nextSharedFile).\(ext)"
        nextSharedFile += 1
        files.append(
            PlannedFile(
                path: path, kind: .segment, source: SourceURI(absolute: url), parts: [], rebased: false,
                decryption: nil,
                rendition: rendition, startTime: resolved.startTime, duration: 0, units: 0))
        shared[url] = files.count - 1
        return files.count - 1
    }

    /// What makes two segments one file: the resource (its string shared with the segment's, not a
    /// new one per segment), the range, and the IV it is decrypted with.
    private struct WholeResource: Hashable {
        var url: String
        var range: ByteRange?
        var iv: [UInt8]?

        init(url: String, range: ByteRange?, iv: [UInt8]?) {
            self.url = url
            self.range = range
            self.iv = iv
        }

        /// The resource a whole file holds.
        init(of file: PlannedFile) {
            self.init(url: file.url, range: file.parts?.first, iv: file.decryption?.iv)
        }

        func isHeld(by file: PlannedFile) -> Bool {
            file.kind == .segment && file.url == url && file.parts == range.map { [$0] } && file.decryption?.iv == iv
        }
    }

    /// `uri` with its spaces percent-encoded (servers write them; URLs cannot hold them).
    static func withSpacesEncoded(_ uri: String) -> String {
        uri.contains(" ") ? uri.replacingOccurrences(of: " ", with: "%20") : uri
    }

    /// `resolved` with spaces in its URIs percent-encoded.
    static func normalized(_ resolved: ResolvedSegment) -> ResolvedSegment {
        func fix(_ uri: String) -> String { withSpacesEncoded(uri) }
        guard
            resolved.uri.contains(" ") || resolved.map?.uri.contains(" ") == true
                || resolved.keys.contains(where: { $0.uri?.contains(" ") == true })
                || resolved.map?.keys.contains(where: { $0.uri?.contains(" ") == true }) == true
        else { return resolved }
        var copy = resolved
        copy.uri = fix(copy.uri)
        if let map = copy.map {
            copy.map?.uri = fix(map.uri)
            for index in map.keys.indices { copy.map?.keys[index].uri = map.keys[index].uri.map(fix) }
        }
        for index in copy.keys.indices { copy.keys[index].uri = copy.keys[index].uri.map(fix) }
        return copy
    }

    /// The last path component.
    static func name(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Whether `url` is an absolute http or https URL with a host.
    static func isFetchable(_ url: String) -> Bool {
        let lower = url.prefix(8).lowercased()
        let rest: Substring
        if lower.hasPrefix("http://") {
            rest = url.dropFirst(7)
        } else if lower.hasPrefix("https://") {
            rest = url.dropFirst(8)
        } else {
            return false
        }
        guard let first = rest.first, first != "/", first != "?", first != "#" else { return false }
        return !url.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F })
    }
}
