import Testing

@testable import StreamKitDownloads

/// The bookkeeping's tables of planned files: by path (every path found at its index through
/// growth, absent paths not found, a path planned twice kept at its first index), and what a
/// checkpoint lists of them.
@Suite struct FilePathIndexTests {
    private static func file(_ path: String) -> PlannedFile {
        PlannedFile(
            path: path, kind: .segment, source: SourceURI(absolute: "http://h/" + path), parts: nil, rebased: false,
            decryption: nil,
            rendition: 0, startTime: 0, duration: 2, units: 1)
    }

    @Test func everyPathIsFoundAtItsIndexAsTheTableGrows() {
        var files = ChunkedArray<PlannedFile>()
        var index = FilePathIndex()
        for number in 0..<5_000 {
            files.append(Self.file("video/\(number).ts"))
            index.insert(number, in: files)
            // Found at once, and the first ones still after every growth.
            #expect(index.index(of: "video/\(number).ts", in: files) == number)
            #expect(index.index(of: "video/0.ts", in: files) == 0)
        }
        #expect(index.count == 5_000)
        for number in stride(from: 0, to: 5_000, by: 7) {
            #expect(index.index(of: "video/\(number).ts", in: files) == number)
        }
        #expect(index.index(of: "video/5000.ts", in: files) == nil)
        #expect(index.index(of: "audio/0.ts", in: files) == nil)
        #expect(FilePathIndex().index(of: "video/0.ts", in: files) == nil)
    }

    /// Entries under one hash (every one colliding) are told apart by the test of the element,
    /// through growth.
    @Test func entriesUnderOneHashAreToldApartByTheirElements() {
        let names = (0..<200).map { "resource-\($0)" }
        var table = IndexTable()
        for index in names.indices { table.insert(index, hash: 7) { _ in 7 } }
        #expect(table.count == 200)
        for index in stride(from: 0, to: 200, by: 13) {
            #expect(table.first(hash: 7) { names[$0] == "resource-\(index)" } == index)
        }
        #expect(table.first(hash: 7) { names[$0] == "absent" } == nil)
    }

    @Test func aReservedTableHoldsWhatItWasReservedFor() {
        let files = ChunkedArray((0..<1_000).map { Self.file("v/\($0).m4s") })
        var index = FilePathIndex()
        index.reserveCapacity(files.count, in: files)
        for number in files.indices { index.insert(number, in: files) }
        #expect(files.indices.allSatisfy { index.index(of: "v/\($0).m4s", in: files) == $0 })
    }

    /// The bookkeeping plans a path listed twice once: the second gets the first one's index,
    /// both when it takes a planning's chunks whole and when it adds files one at a time.
    @Test func aPathPlannedTwiceIsOneFile() {
        let twice = ChunkedArray([Self.file("video/0.ts"), Self.file("video/1.ts"), Self.file("video/0.ts")])
        var taken = HLSDownloadBookkeeping(connections: 2, minimumPieceBytes: 1)
        taken.renditionPlanned(priorBytesPerSecond: nil)
        taken.filesPlanned(taking: twice)
        #expect(taken.files.map(\.path) == ["video/0.ts", "video/1.ts"])
        #expect(taken.fileIndex("video/1.ts") == 1)
        var added = HLSDownloadBookkeeping(connections: 2, minimumPieceBytes: 1)
        added.renditionPlanned(priorBytesPerSecond: nil)
        #expect(added.filesPlanned(Array(twice)) == [0, 1, 0])
        #expect(added.filesPlanned([Self.file("video/2.ts"), Self.file("video/1.ts")]) == [2, 1])
        #expect(added.fileIndex("video/2.ts") == 2 && added.fileIndex("video/3.ts") == nil)
    }

    /// What a journal line records: the files planned since the last checkpoint and those whose
    /// state changed, in order, each once; nothing to list for a whole write; `nil` once the
    /// files were renumbered.
    @Test func aCheckpointListsTheFilesPlannedOrChangedSinceTheLast() {
        var books = HLSDownloadBookkeeping(connections: 2, minimumPieceBytes: 1)
        books.renditionPlanned(priorBytesPerSecond: nil)
        books.filesPlanned((0..<3).map { Self.file("video/\($0).ts") })
        #expect(books.manifestTaken() == [0, 1, 2])
        books.fileFinished(1, length: 10, etag: nil)
        #expect(books.manifestTaken() == [1])
        #expect(books.manifestTaken() == [])
        books.filesPlanned((3..<5).map { Self.file("video/\($0).ts") })
        books.fileFinished(4, length: 10, etag: nil)
        books.fileFinished(0, length: 10, etag: nil)
        #expect(books.manifestTaken() == [0, 3, 4])
        books.fileFinished(2, length: 10, etag: nil)
        #expect(books.manifestTaken(listingChanges: false) == nil)
        #expect(books.manifestTaken() == [])
        _ = books.recordingTrimmed(keeping: ["video/0.ts"])
        #expect(books.manifestTaken() == nil)
        #expect(books.manifestTaken() == [])
    }
}
