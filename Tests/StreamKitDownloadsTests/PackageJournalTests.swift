import Foundation
import StreamKitCore
import StreamKitHLS
import Testing

@testable import StreamKitDownloads

/// `package.json` continued by the lines of `.streamkit/package.journal`: read back as one
/// manifest, with lines of another write, and the tail a kill cut short, left out.
@Suite struct PackageJournalTests {
    private func file(_ path: String, _ state: String = "pending", length: Int64? = nil) -> PackageManifest.File {
        PackageManifest.File(
            path: path, kind: "segment", url: "http://h/" + path, ranges: nil, state: state, length: length)
    }

    private func rendition(segments: Int) -> PackageManifest.Rendition {
        PackageManifest.Rendition(
            folder: "video", role: "main", playlistURL: "http://h/v.m3u8", segments: segments,
            duration: Double(segments) * 2, ended: false)
    }

    private func manifest(journal: Int?) -> PackageManifest {
        PackageManifest(
            id: "p", source: "http://h/v.m3u8", selection: HLSSelection(), decrypt: false, live: true,
            status: .recording, created: "2026-12-07T10:00:00Z", updated: "2026-12-07T10:00:00Z",
            renditions: [rendition(segments: 2)], files: [file("video/0.ts", "done", length: 10), file("video/1.ts")],
            journal: journal)
    }

    private func line(_ update: PackageManifestUpdate) throws -> Data {
        try JSONEncoder().encode(update) + Data([0x0A])
    }

    private func update(_ number: Int, segments: Int, _ files: [PackageManifest.File]) -> PackageManifestUpdate {
        PackageManifestUpdate(
            journal: number, status: .recording, updated: "2026-12-07T10:00:0\(segments)Z",
            renditions: [rendition(segments: segments)], files: files)
    }

    @Test func linesUpdateFilesInPlaceAndAddNewOnesAtTheEnd() throws {
        let journal =
            try line(update(7, segments: 3, [file("video/1.ts", "done", length: 11), file("video/2.ts")]))
            + line(update(7, segments: 4, [file("video/2.ts", "gap"), file("video/3.ts")]))
        let base = manifest(journal: 7)
        let read = base.applying(base.updates(in: journal))
        #expect(read.files.map(\.path) == ["video/0.ts", "video/1.ts", "video/2.ts", "video/3.ts"])
        #expect(read.files.map(\.state) == ["done", "done", "gap", "pending"])
        #expect(read.files[1].length == 11)
        #expect(read.renditions.map(\.segments) == [4] && read.updated == "2026-12-07T10:00:04Z")
    }

    /// Lines of another number (left by a kill between a whole write and emptying the journal),
    /// the tail of an append cut short, and everything for a manifest with no number: not read.
    @Test func linesOfAnotherWriteAndACutTailAreNotRead() throws {
        let good = try line(update(7, segments: 3, [file("video/1.ts", "done", length: 11)]))
        let other = try line(update(6, segments: 9, [file("video/1.ts", "gap")]))
        let cut = try line(update(7, segments: 5, [file("video/4.ts")])).dropLast(9)
        let base = manifest(journal: 7)
        let read = base.applying(base.updates(in: other + good + cut))
        #expect(read.files.map(\.state) == ["done", "done"] && read.renditions.map(\.segments) == [3])
        // A complete line after one that does not read is not taken either (appends are in order,
        // so nothing can follow a cut line but garbage).
        #expect(base.updates(in: good + Data("{not json\n".utf8) + good).count == 1)
        let alone = manifest(journal: nil)
        #expect(alone.updates(in: good).isEmpty)
        #expect(base.updates(in: Data()).isEmpty)
    }

    /// `PackageStore.load` reads the journal beside package.json.
    @Test func loadingAPackageReadsItsJournal() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent(PackageLayout.internalFolder), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try PackageStore.save(manifest(journal: 7), in: directory)
        try PackageStore.append(
            Array(try line(update(7, segments: 3, [file("video/2.ts", "done", length: 12)]))),
            to: PackageStore.journalURL(in: directory).path, creating: true)
        let read = try #require(try PackageManifest.load(from: directory))
        #expect(read.files.map(\.path) == ["video/0.ts", "video/1.ts", "video/2.ts"])
        #expect(read.files.last?.length == 12 && read.journal == 7)
    }

    /// A manifest with every member set: what package.json holds when nothing is left out.
    private func fullManifest() throws -> PackageManifest {
        let text = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nv.m3u8\n"
        guard case .multivariant(let master) = try Playlist.parse(Array(text.utf8)).playlist else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var files = [file("video/0.ts", "done", length: 10), file("video/1.ts", "gap")]
        files[0].etag = "\"e\\/\u{1}\""
        files[0].ranges = [[0, 10], [20, 30]]
        files[1].error = "HTTP 404"
        var manifest = manifest(journal: 7)
        manifest.renditions[0].groupID = "aud"
        manifest.renditions[0].name = "English"
        manifest.renditions[0].language = "en"
        manifest.renditions[0].bandwidth = 800_000
        manifest.renditions[0].lastSourceSequence = 12
        manifest.renditions[0].duration = 2.002
        manifest.title = "A title/with \"quotes\""
        manifest.masterURL = "http://h/master.m3u8"
        manifest.error = "failed"
        manifest.master = master
        manifest.variant = master.variants.first
        manifest.sourceKind = PackageManifest.dashKind
        manifest.files = files
        return manifest
    }

    /// package.json written with its file records made one at a time is the manifest written
    /// from its array, byte for byte, and reads back as it; the explicit encoding names every
    /// stored member (one added without a key would silently not be written).
    @Test func aManifestWrittenRecordByRecordIsTheManifestWrittenWhole() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streamed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let full = try fullManifest()
        #expect(Mirror(reflecting: full).children.count == PackageManifest.CodingKeys.allCases.count)
        try PackageStore.save(full, in: directory)
        let whole = try Data(contentsOf: PackageStore.manifestURL(in: directory))
        #expect(try PackageManifest.load(from: directory) == full)
        #expect(try JSONDecoder().decode(PackageManifest.self, from: JSONEncoder().encode(full)) == full)
        var header = full
        header.files = []
        var made = 0
        try PackageStore.save(
            StreamedFileRecords(
                document: header,
                records: .init { emit in
                    for record in full.files {
                        made += 1
                        try emit(record)
                    }
                }),
            in: directory)
        #expect(made == full.files.count)
        #expect(try Data(contentsOf: PackageStore.manifestURL(in: directory)) == whole)
    }

    /// A journal line written with its file records made one at a time reads back as the update
    /// it records, and its explicit encoding names every stored member.
    @Test func aLineWrittenRecordByRecordReadsBackAsTheUpdate() throws {
        let full = update(7, segments: 3, [file("video/1.ts", "done", length: 11), file("video/2.ts", "gap")])
        #expect(Mirror(reflecting: full).children.count == PackageManifestUpdate.CodingKeys.allCases.count)
        var header = full
        header.files = []
        var bytes: [UInt8] = []
        var writer = JSONWriter(chunkSize: 16) { bytes += $0 }
        try writer.encode(StreamedFileRecords(document: header, records: .init { try full.files.forEach($0) }))
        writer.flush()
        #expect(try JSONDecoder().decode(PackageManifestUpdate.self, from: Data(bytes)) == full)
        #expect(try JSONDecoder().decode(PackageManifestUpdate.self, from: JSONEncoder().encode(full)) == full)
    }
}
