import Foundation
import StreamKitCore
import StreamKitHLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a package stands.
public enum PackageStatus: String, Codable, Sendable, Hashable {
    /// Files are being fetched (or a run stopped before the end and will resume).
    case downloading
    /// A live playlist is being recorded.
    case recording
    /// The last run was cancelled; running it again resumes.
    case interrupted
    /// The last run failed; running it again resumes.
    case failed
    /// Every file is in place and the playlists are written.
    case complete
    /// Complete except for segments skipped with `--skip-broken` (EXT-X-GAP); a new run retries them.
    case completeWithGaps
}

/// `package.json`: what the package is (source, selection), what it holds and each file's state.
///
/// Written atomically (temporary file, then rename) at checkpoints and at the end. A file counts as
/// done when it exists under its final name, since files are only renamed into place once complete;
/// the lengths recorded here are checked against the disk when a run resumes.
public struct PackageManifest: Codable, Sendable, Hashable {
    /// One file of the package.
    public struct File: Codable, Sendable, Hashable {
        /// The path relative to the package folder.
        public var path: String
        /// `segment`, `map` or `key`.
        public var kind: String
        /// The source URL.
        public var url: String
        /// For files made of byte ranges: the ranges of the source, `[[start, end], ...]` (end exclusive).
        public var ranges: [[Int64]]?
        /// `pending`, `done` or `gap`.
        public var state: String
        /// The length on disk once done.
        public var length: Int64?
        /// The source's ETag, when it sent a strong one.
        public var etag: String?
        /// Why it was skipped, for a gap.
        public var error: String?
    }

    /// One rendition (folder) of the package.
    public struct Rendition: Codable, Sendable, Hashable {
        /// Its folder.
        public var folder: String
        /// `main`, `mainAudioOnly`, `audio` or `subtitles`.
        public var role: String
        /// The source media playlist.
        public var playlistURL: String
        /// EXT-X-MEDIA attributes, for alternative renditions.
        public var groupID: String?
        public var name: String?
        public var language: String?
        /// Bits a second the source announced for the variant.
        public var bandwidth: Int?
        /// Segments recorded.
        public var segments: Int
        /// Seconds recorded.
        public var duration: Double
        /// For a live recording: whether no more segments are taken.
        public var ended: Bool
        /// For a live recording: the source media sequence number of the last segment taken.
        public var lastSourceSequence: UInt64?
    }

    /// The format version of this file.
    public var format = 1
    /// The package id.
    public var id: String
    /// The playlist URL the download started from.
    public var source: String
    /// The title the user gave, if any (``HLSDownloadJob/title``).
    public var title: String?
    /// The multivariant playlist's URL after redirects, when the source is one.
    public var masterURL: String?
    /// The selection words.
    public var selection: HLSSelection
    /// Whether AES-128 and SAMPLE-AES (MPEG-TS) segments are stored decrypted.
    public var decrypt: Bool
    /// Whether the source is a live playlist being recorded.
    public var live: Bool
    /// Where the package stands.
    public var status: PackageStatus
    /// The last failure, when ``status`` is `failed`.
    public var error: String?
    /// When the package was started and last saved (ISO 8601).
    public var created: String
    public var updated: String
    /// The source multivariant playlist, when there is one.
    public var master: MultivariantPlaylist?
    /// The chosen variant.
    public var variant: VariantStream?
    /// The renditions, main first.
    public var renditions: [Rendition]
    /// Every file, in download order.
    public var files: [File]
    /// What the source is: `nil` for HLS, ``dashKind`` for an MPD (kept in
    /// `.streamkit/source.mpd`; the package has a `manifest.mpd` too).
    public var sourceKind: String? = nil
    /// While a download runs: the number that the lines of `.streamkit/package.journal` which
    /// continue this file carry (``PackageManifestUpdate``). A line with another number is left
    /// over from an earlier write and is not read. `nil` once the download stopped.
    public var journal: Int? = nil

    /// ``sourceKind`` of a package downloaded from an MPD.
    public static let dashKind = "dash"

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, id, source, title, masterURL, selection, decrypt, live, status, error, created, updated
        case master, variant, renditions, files, sourceKind, journal
    }

    public func encode(to encoder: any Encoder) throws {
        try encode(to: encoder, files: files)
    }

    /// Encodes the manifest with `files` in place of ``files``, so that a checkpoint can stream
    /// its file records to the file one at a time rather than gather them in an array first.
    /// Members in declaration order, `nil` ones left out, as the synthesized encoding wrote them.
    func encode(to encoder: any Encoder, files: some Encodable) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(id, forKey: .id)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(masterURL, forKey: .masterURL)
        try container.encode(selection, forKey: .selection)
        try container.encode(decrypt, forKey: .decrypt)
        try container.encode(live, forKey: .live)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encode(created, forKey: .created)
        try container.encode(updated, forKey: .updated)
        try container.encodeIfPresent(master, forKey: .master)
        try container.encodeIfPresent(variant, forKey: .variant)
        try container.encode(renditions, forKey: .renditions)
        try container.encode(files, forKey: .files)
        try container.encodeIfPresent(sourceKind, forKey: .sourceKind)
        try container.encodeIfPresent(journal, forKey: .journal)
    }
}

/// A document holding a list of file records: `package.json` and a line of its journal.
protocol PackageFileList {
    /// Encodes the document with `files` in place of its own list of file records.
    func encode(to encoder: any Encoder, files: some Encodable) throws
}

/// A document whose file records are made as they are written: `produce` hands each to `emit`,
/// in order. The document's own list of records is not written.
struct StreamedFileRecords<Document: PackageFileList>: Encodable {
    struct Records: Encodable {
        let produce: (_ emit: (PackageManifest.File) throws -> Void) throws -> Void

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try produce { try container.encode($0) }
        }
    }

    var document: Document
    var records: Records

    func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder, files: records)
    }
}

extension PackageManifest: PackageFileList {}

/// One line of `.streamkit/package.journal`: a checkpoint that wrote only what changed since the
/// one before, instead of the whole of `package.json`. A day's live recording wrote its
/// `package.json` whole at each new segment, about 100 GB for a file that ends at 5 MB; the
/// journal is appended to until it is as long as `package.json`, which is then written whole
/// again, so that a download writes a few times its final state in all.
struct PackageManifestUpdate: Codable, Hashable, Sendable {
    /// ``PackageManifest/journal`` of the `package.json` it continues.
    var journal: Int
    var status: PackageStatus
    var updated: String
    var renditions: [PackageManifest.Rendition]
    /// The files planned or changed since the checkpoint before, in download order.
    var files: [PackageManifest.File]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case journal, status, updated, renditions, files
    }

    func encode(to encoder: any Encoder) throws {
        try encode(to: encoder, files: files)
    }
}

extension PackageManifestUpdate: PackageFileList {
    func encode(to encoder: any Encoder, files: some Encodable) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(journal, forKey: .journal)
        try container.encode(status, forKey: .status)
        try container.encode(updated, forKey: .updated)
        try container.encode(renditions, forKey: .renditions)
        try container.encode(files, forKey: .files)
    }
}

extension PackageManifest {
    /// The manifest with `updates` applied in order: the state, the renditions, and each file
    /// replaced where its path is known, added at the end where it is not.
    func applying(_ updates: some Sequence<PackageManifestUpdate>) -> PackageManifest {
        var manifest = self
        var positions: [String: Int]?
        for update in updates {
            manifest.status = update.status
            manifest.updated = update.updated
            manifest.renditions = update.renditions
            if positions == nil {
                positions = Dictionary(
                    manifest.files.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
            }
            for file in update.files {
                if let position = positions?[file.path] {
                    manifest.files[position] = file
                } else {
                    positions?[file.path] = manifest.files.count
                    manifest.files.append(file)
                }
            }
        }
        return manifest
    }

    /// The updates of `journal` (the journal file's bytes) that continue this manifest: the
    /// complete lines with its number, up to the first line that does not read (the tail of an
    /// append a kill cut short).
    func updates(in journal: Data) -> [PackageManifestUpdate] {
        guard let number = self.journal else { return [] }
        var updates: [PackageManifestUpdate] = []
        let decoder = JSONDecoder()
        var lines = journal.split(separator: 0x0A, omittingEmptySubsequences: false)
        // What follows the last newline is not a complete line.
        lines.removeLast()
        for line in lines {
            guard let update = try? decoder.decode(PackageManifestUpdate.self, from: line) else { break }
            if update.journal == number { updates.append(update) }
        }
        return updates
    }
}

extension PackageManifest {
    /// The `package.json` of the package in `directory`, or `nil` when there is none.
    ///
    /// - Throws: ``HLSDownloadError`` `packageConflict` when it exists but cannot be read.
    public static func load(from directory: URL) throws(HLSDownloadError) -> PackageManifest? {
        try PackageStore.load(from: directory)
    }
}

/// Reads and writes a package's `package.json`.
package enum PackageStore {
    static func manifestURL(in directory: URL) -> URL { directory.appendingPathComponent(PackageLayout.manifestName) }
    static func journalURL(in directory: URL) -> URL { directory.appendingPathComponent(PackageLayout.journalName) }

    /// The manifest in `directory`, or `nil` when there is none.
    ///
    /// - Throws: ``HLSDownloadError`` `packageConflict` when it exists but cannot be read.
    static func load(from directory: URL) throws(HLSDownloadError) -> PackageManifest? {
        let url = manifestURL(in: directory)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            let manifest = try JSONDecoder().decode(PackageManifest.self, from: Data(contentsOf: url))
            guard manifest.journal != nil,
                let journal = FileManager.default.contents(atPath: journalURL(in: directory).path)
            else { return manifest }
            return manifest.applying(manifest.updates(in: journal))
        } catch {
            throw HLSDownloadError(
                .packageConflict, path: PackageLayout.manifestName,
                detail: "\(url.path) cannot be read: \(error)")
        }
    }

    /// Writes `manifest` atomically, streaming: the JSON goes to the file in chunks as it is
    /// encoded (`JSONEncoder` would build the whole document, and a tree of it before that, in
    /// memory: several times a million-segment manifest's size, at every checkpoint).
    static func save(_ manifest: PackageManifest, in directory: URL) throws(HLSDownloadError) {
        try save(
            StreamedFileRecords(document: manifest, records: .init { emit in try manifest.files.forEach(emit) }),
            in: directory)
    }

    /// Writes `manifest` as ``save(_:in:)`` does, its file records made one at a time as they
    /// are written (a million-segment package's array of them is 120 MB).
    static func save(_ manifest: StreamedFileRecords<PackageManifest>, in directory: URL) throws(HLSDownloadError) {
        do {
            try AtomicFile.write(
                to: manifestURL(in: directory).path, temporarySuffix: PackageLayout.temporarySuffix
            ) { emit in
                try JSONWriter.encode(manifest, chunkSize: 256 << 10, into: emit)
            }
        } catch let error as SystemError {
            throw HLSDownloadError(writeFailed: error, path: PackageLayout.manifestName)
        } catch {
            throw HLSDownloadError(.writeFailed, path: PackageLayout.manifestName, detail: "\(error)")
        }
    }

    /// Writes `playlist` atomically, as ``writeAtomically(_:to:)`` does, its text streamed to the
    /// file in chunks: the final playlist of a million segments is 30 MB of text, which a
    /// `String` and a `Data` copy of it held twice over beside everything else at the download's
    /// peak.
    ///
    /// - Parameter trailer: Bytes written after the playlist's text.
    static func writeAtomically(
        _ playlist: MediaPlaylist, to url: URL, then trailer: [UInt8] = []
    )
        throws(HLSDownloadError)
    {
        try writeAtomically(playlist, segments: { each in playlist.segments.forEach(each) }, to: url, then: trailer)
    }

    /// Writes `frame` (a playlist's header and end) with the segments `produce` hands to its
    /// argument, as ``writeAtomically(_:to:then:)`` writes a whole playlist
    /// (``PlaylistComposer/frame(_:alsoSkipped:header:target:gaps:ending:firstSequence:each:)``).
    static func writeAtomically(
        _ frame: MediaPlaylist, segments produce: (_ each: (MediaSegment) -> Void) -> Void, to url: URL,
        then trailer: [UInt8] = []
    )
        throws(HLSDownloadError)
    {
        do {
            try AtomicFile.write(to: url.path, temporarySuffix: PackageLayout.temporarySuffix) { emit in
                frame.serialized(chunkSize: 256 << 10, segments: produce) { emit($0) }
                if !trailer.isEmpty { emit(trailer) }
            }
        } catch let error as SystemError {
            throw HLSDownloadError(writeFailed: error, path: url.lastPathComponent)
        } catch {
            throw HLSDownloadError(.writeFailed, path: url.lastPathComponent, detail: "\(error)")
        }
    }

    /// Writes `data` to a temporary name next to `url`, then renames it into place. The name is
    /// one of its own: two writers of one file (two renditions' recorders fetching the same key,
    /// two pieces saving one ranges record) must not write into the same temporary file.
    static func writeAtomically(_ data: Data, to url: URL) throws(HLSDownloadError) {
        do {
            try AtomicFile.write(data, to: url.path, temporarySuffix: PackageLayout.temporarySuffix)
        } catch {
            throw HLSDownloadError(writeFailed: error, path: url.lastPathComponent)
        }
    }

    /// Appends `bytes` to the file at `path` with one write (a kill leaves the file as it was or
    /// with a tail cut short, which a recorded source's reader drops).
    ///
    /// - Parameter creating: Whether a missing file is made (private to the user), rather than
    ///   the append failing.
    static func append(_ bytes: [UInt8], to path: String, creating: Bool = false) throws(HLSDownloadError) {
        try append(to: path, creating: creating) { emit in emit(bytes) }
    }

    /// Appends what `produce` hands to its `emit` function to the file at `path`, chunk by chunk,
    /// so that a long line (a checkpoint of many files) never sits in memory whole. A kill, or a
    /// failed write, leaves the file with the tail of a line cut short, which its readers drop;
    /// after a failed write the remaining chunks are dropped, and the error is thrown once
    /// `produce` returns.
    static func append(
        to path: String, creating: Bool = false, produce: (_ emit: ([UInt8]) -> Void) throws -> Void
    ) throws(HLSDownloadError) {
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC
        let descriptor = creating ? PrivateFiles.open(path, flags | O_CREAT) : open(path, flags)
        guard descriptor >= 0 else {
            throw HLSDownloadError(writeFailed: .current("open", subject: path), path: path)
        }
        defer { close(descriptor) }
        var failure: HLSDownloadError?
        do {
            try produce { bytes in
                var offset = 0
                while failure == nil, offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else {
                        failure = HLSDownloadError(writeFailed: .current("write", subject: path), path: path)
                        return
                    }
                    offset += written
                }
            }
        } catch {
            throw failure ?? HLSDownloadError(.writeFailed, path: path, detail: "\(error)")
        }
        if let failure { throw failure }
    }

    /// ISO 8601 in UTC with seconds.
    package static func timestamp(_ date: Date = Date()) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
