import StreamKitCore
import StreamKitHTTP
import Testing

@testable import StreamKitDownloads

/// The HLS engine's bookkeeping: event sequences and the actions each returns, with no server,
/// file or socket.
struct HLSDownloadBookkeepingTests {
    /// Something that happens to a download, as the engine reports it to the bookkeeping.
    enum Event: Sendable {
        case restored(Int, FileState, RangedFileState?)
        case started(recording: Bool)
        case progressed(Int, received: Int64)
        case transferred(Int, bytes: Int64)
        case finished(Int, length: Int64)
        case keyFetched(Int)
        case written(Int, ByteRange)
        case rangeFailed(Int, ByteRange)
        case pieceEnded(Int, done: Int, skipped: Int)
        case failed(WorkItem, HLSDownloadError.Kind, skipBroken: Bool)
        case placed(Int, length: Int64, failure: HLSDownloadError?)
        case becameGap(Int)
        case tick(milliseconds: Int)
        case manifestTaken
        case checkpointWritten(dueAt: Int, writtenAt: Int)
        case planChanged
        case stopped
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        /// What reconcile found of the byte-range file's bytes on disk.
        var rangedOnDisk = ByteRangeSet()
        /// Each event and the actions it must return.
        var steps: [(Event, [HLSDownloadAction])]
        /// Checked after the last step.
        var check: @Sendable (HLSDownloadBookkeeping) -> Void = { _ in }

        var testDescription: String { name }
    }

    static let segment0 = "video/00000.ts"
    static let segment1 = "video/00001.ts"
    static let key = "video/key-0.key"
    static let audio = "audio-en/media.aac"
    /// The byte-range file's two pieces with 2 connections: two ranges each.
    static let pieceA = ByteRange(0, 200)
    static let pieceB = ByteRange(200, 400)

    /// Two whole video segments, a key, and an audio file of four byte ranges with `rangedOnDisk`
    /// of its bytes on disk (reconcile gives every byte-range file its state).
    static func plan(rangedOnDisk: ByteRangeSet = ByteRangeSet()) -> HLSDownloadBookkeeping {
        var books = HLSDownloadBookkeeping(connections: 2, minimumPieceBytes: 1)
        books.renditionPlanned(priorBytesPerSecond: 100)
        books.renditionPlanned(priorBytesPerSecond: 10)
        func whole(_ path: String, kind: PlannedFile.Kind = .segment, start: Double) -> PlannedFile {
            PlannedFile(
                path: path, kind: kind, source: SourceURI(absolute: "http://origin/\(path)"), parts: nil,
                rebased: false, decryption: nil,
                rendition: 0, startTime: start, duration: kind == .segment ? 4 : 0, units: 1)
        }
        let ranged = PlannedFile(
            path: audio, kind: .segment, source: SourceURI(absolute: "http://origin/audio.aac"),
            parts: [ByteRange(0, 100), ByteRange(100, 200), ByteRange(200, 300), ByteRange(300, 400)],
            rebased: false, decryption: nil, rendition: 1, startTime: 0, duration: 8, units: 4)
        let indices = books.filesPlanned([
            whole(segment0, start: 0), whole(segment1, start: 4), whole(key, kind: .key, start: 0), ranged,
        ])
        #expect(indices == [0, 1, 2, 3])
        #expect(books.filesPlanned([whole(segment1, start: 4)]) == [1])
        books.fileRestored(3, .pending, RangedFileState(done: rangedOnDisk))
        return books
    }

    static let allItems: [WorkItem] = [
        .whole(file: 0), .piece(file: 3, range: pieceA, units: 2), .piece(file: 3, range: pieceB, units: 2),
        .whole(file: 1),
    ]

    static let broken = HLSDownloadError(.fileFailed, url: "http://origin/x", status: .notFound, detail: "gone")

    static let scenarios: [Scenario] = [
        Scenario(
            name: "a new download queues every item in media-time order, then finishes the queue",
            steps: [(.started(recording: false), [.enqueue(allItems), .finishQueue])],
            check: { books in
                #expect(books.unitsTotal == 7)
                #expect(books.unitsDone == 0)
            }),
        Scenario(
            name: "a live recording leaves the queue open for the reloaders",
            steps: [(.started(recording: true), [.enqueue(allItems)])]),
        Scenario(
            name: "a resume queues only what an earlier run did not finish",
            rangedOnDisk: ByteRangeSet([pieceA]),
            steps: [
                (.restored(0, .done(length: 500, etag: "\"a\""), nil), []),
                (
                    .started(recording: false),
                    [.enqueue([.piece(file: 3, range: pieceB, units: 2), .whole(file: 1)]), .finishQueue]
                ),
            ],
            check: { books in
                #expect(books.unitsDone == 3)
                #expect(books.bytesDone == 700)
                #expect(books.filesAlreadyDone == 1)
                #expect(books.ranged[3]?.piecesLeft == 1)
            }),
        Scenario(
            name: "a byte-range file whose every piece arrived before a stop is moved into place first",
            rangedOnDisk: ByteRangeSet([ByteRange(0, 400)]),
            steps: [
                (
                    .started(recording: false),
                    [
                        .completeRangedFile(3, failure: nil),
                        .enqueue([.whole(file: 0), .whole(file: 1)]), .finishQueue,
                    ]
                ),
                (.placed(3, length: 400, failure: nil), []),
            ],
            check: { books in
                #expect(books.states[3] == .done(length: 400, etag: nil))
                #expect(books.unitsDone == 4)
                #expect(books.filesFetched == 1)
            }),
        Scenario(
            name: "a whole file counts its bytes as they come and its units when in place",
            steps: [
                (.started(recording: false), [.enqueue(allItems), .finishQueue]),
                (.progressed(0, received: 300), []),
                (.transferred(0, bytes: 500), []),
                (.finished(0, length: 480), []),
                (.keyFetched(2), []),
                (.keyFetched(2), []),
            ],
            check: { books in
                #expect(books.states[0] == .done(length: 480, etag: nil))
                #expect(books.states[2] == .done(length: 16, etag: nil))
                #expect(books.unitsDone == 2)
                #expect(books.bytesDone == 516)
                #expect(books.bytesTransferred == 516)
                #expect(books.filesFetched == 2)
                #expect(books.bytesInPlace == 496)
            }),
        Scenario(
            name: "without --skip-broken a failure fails the download",
            steps: [(.failed(.whole(file: 0), .fileFailed, skipBroken: false), [.fail(broken)])],
            check: { books in #expect(books.states[0] == .pending) }),
        Scenario(
            name: "with --skip-broken a cancellation or a write failure still fails the download",
            steps: [
                (.failed(.whole(file: 0), .cancelled, skipBroken: true), [.fail(.cancelled)]),
                (
                    .failed(.whole(file: 0), .writeFailed, skipBroken: true),
                    [.fail(HLSDownloadError(.writeFailed))]
                ),
            ],
            check: { books in #expect(books.unitsSkipped == 0) }),
        Scenario(
            name: "with --skip-broken a whole file that fails becomes a gap, its bytes uncounted",
            steps: [
                (.progressed(1, received: 300), []),
                (
                    .failed(.whole(file: 1), .fileFailed, skipBroken: true),
                    [.reportSkipped(path: segment1, url: "http://origin/\(segment1)", bytes: nil, error: broken)]
                ),
            ],
            check: { books in
                #expect(books.states[1] == .skipped(reason: broken.description, status: .notFound))
                #expect(books.unitsSkipped == 1)
                #expect(books.bytesDone == 0)
                #expect(books.bytesTransferred == 300)
            }),
        Scenario(
            name: "with --skip-broken the last piece failing completes the file as a gap for that failure",
            steps: [
                (.started(recording: false), [.enqueue(allItems), .finishQueue]),
                (.written(3, pieceA), []),
                (.pieceEnded(3, done: 2, skipped: 0), []),
                (
                    .failed(.piece(file: 3, range: pieceB, units: 2), .fileFailed, skipBroken: true),
                    [
                        .reportSkipped(path: audio, url: "http://origin/audio.aac", bytes: nil, error: broken),
                        .completeRangedFile(3, failure: broken),
                    ]
                ),
                (.placed(3, length: 400, failure: broken), []),
            ],
            check: { books in
                #expect(books.states[3] == .skipped(reason: broken.description, status: .notFound))
                #expect(books.ranged[3]?.failed == ByteRangeSet([pieceB]))
                #expect(books.unitsDone == 2)
                #expect(books.unitsSkipped == 2)
                #expect(books.bytesDone == 200)
            }),
        Scenario(
            name: "ranges failing one by one end the piece; the last piece completes the file",
            steps: [
                (.started(recording: false), [.enqueue(allItems), .finishQueue]),
                (.written(3, ByteRange(0, 100)), []),
                (
                    .rangeFailed(3, ByteRange(100, 200)),
                    [
                        .reportSkipped(
                            path: audio, url: "http://origin/audio.aac", bytes: ByteRange(100, 200), error: broken)
                    ]
                ),
                (.pieceEnded(3, done: 1, skipped: 1), []),
                (.written(3, pieceB), []),
                (.pieceEnded(3, done: 2, skipped: 0), [.completeRangedFile(3, failure: nil)]),
                (.placed(3, length: 400, failure: nil), []),
            ],
            check: { books in
                #expect(books.states[3] == .skipped(reason: "some byte ranges failed", status: nil))
                #expect(books.unitsDone == 3)
                #expect(books.unitsSkipped == 1)
            }),
        Scenario(
            name: "every range failing makes the file a gap without placing it",
            steps: [
                (.started(recording: false), [.enqueue(allItems), .finishQueue]),
                (.becameGap(3), []),
            ],
            check: { books in
                #expect(books.states[3] == .skipped(reason: "every byte range failed", status: nil))
                #expect(books.filesFetched == 0)
            }),
        Scenario(
            name: "checkpoints: a second apart, ten times their cost, after a change, none after the stop",
            steps: [
                (.started(recording: false), [.enqueue(allItems), .finishQueue]),
                (.tick(milliseconds: 500), [.reportProgress]),
                (.tick(milliseconds: 1000), [.reportProgress, .writeCheckpoint]),
                (.manifestTaken, []),
                (.checkpointWritten(dueAt: 1000, writtenAt: 1200), []),
                (.tick(milliseconds: 2000), [.reportProgress]),
                (.finished(0, length: 10), []),
                (.tick(milliseconds: 3100), [.reportProgress]),
                (.tick(milliseconds: 3300), [.reportProgress, .writeCheckpoint]),
                (.manifestTaken, []),
                (.checkpointWritten(dueAt: 3300, writtenAt: 3310), []),
                (.planChanged, []),
                (.tick(milliseconds: 4000), [.reportProgress]),
                (.tick(milliseconds: 4310), [.reportProgress, .writeCheckpoint]),
                (.stopped, []),
                (.tick(milliseconds: 9000), [.reportProgress]),
            ],
            check: { books in #expect(books.transferEnded) }),
    ]

    @Test(arguments: scenarios)
    func eventsGiveActions(_ scenario: Scenario) {
        let origin = ContinuousClock.now
        var books = Self.plan(rangedOnDisk: scenario.rangedOnDisk)
        for (index, (event, expected)) in scenario.steps.enumerated() {
            let actions = Self.apply(event, to: &books, origin: origin)
            #expect(actions == expected, "step \(index): \(event)")
        }
        scenario.check(books)
    }

    /// The progress reports the counters, with the size estimate for VOD only.
    @Test func progressReportsTheCounters() {
        let origin = ContinuousClock.now
        var books = Self.plan()
        _ = Self.apply(.transferred(0, bytes: 400), to: &books, origin: origin)
        _ = Self.apply(.finished(0, length: 400), to: &books, origin: origin)
        let vod = books.progress(at: origin, live: false, recordedSeconds: 4, limitSeconds: 60)
        #expect(vod.filesDone == 1)
        #expect(vod.filesTotal == 7)
        #expect(vod.bytesDone == 400)
        #expect(vod.bytesTransferred == 400)
        #expect(vod.estimatedTotalBytes == books.estimator.estimate().map { max($0, books.bytesDone) })
        #expect(vod.recordedSeconds == nil)
        let live = books.progress(at: origin, live: true, recordedSeconds: 4, limitSeconds: 60)
        #expect(live.estimatedTotalBytes == nil)
        #expect(live.recordedSeconds == 4)
        #expect(live.recordingLimitSeconds == 60)
    }

    /// A stopped recording keeps the files its segments use, and keys.
    @Test func trimmingARecordingKeepsUsedFilesAndKeys() {
        var books = Self.plan()
        let removed = books.recordingTrimmed(keeping: [Self.segment0])
        #expect(removed == [Self.segment1, Self.audio])
        #expect(books.files.map(\.path) == [Self.segment0, Self.key])
        #expect(books.fileIndex(Self.segment0) == 0 && books.fileIndex(Self.key) == 1)
        #expect(books.fileIndex(Self.segment1) == nil && books.fileIndex(Self.audio) == nil)
        #expect(books.ranged.isEmpty)
    }

    static func apply(
        _ event: Event, to books: inout HLSDownloadBookkeeping, origin: ContinuousClock.Instant
    ) -> [HLSDownloadAction] {
        func at(_ milliseconds: Int) -> ContinuousClock.Instant { origin + .milliseconds(milliseconds) }
        switch event {
        case .restored(let index, let state, let ranged):
            books.fileRestored(index, state, ranged)
        case .started(let recording):
            return books.transferStarted(recording: recording, at: origin)
        case .progressed(let index, let received):
            books.wholeFileProgressed(index, received: received, transferred: received)
        case .transferred(let index, let bytes):
            books.wholeFileTransferred(index, byteCount: bytes, transferred: bytes)
        case .finished(let index, let length):
            books.fileFinished(index, length: length, etag: nil)
        case .keyFetched(let index):
            books.keyFetched(index)
        case .written(let index, let range):
            #expect(books.rangeWritten(range, file: index, validator: nil, recordDue: false) == nil)
        case .rangeFailed(let index, let range):
            return books.rangeFailed(range, file: index, error: broken)
        case .pieceEnded(let index, let done, let skipped):
            return books.pieceEnded(index, unitsDone: done, unitsSkipped: skipped)
        case .failed(let item, let kind, let skipBroken):
            let error = kind == .fileFailed ? broken : HLSDownloadError(kind)
            return books.itemFailed(item, error: error, skipBroken: skipBroken)
        case .placed(let index, let length, let failure):
            books.rangedFilePlaced(
                index, length: length, etag: nil, gapReason: failure?.description ?? "some byte ranges failed",
                status: failure?.status)
        case .becameGap(let index):
            books.rangedFileBecameGap(index, reason: "every byte range failed", status: nil)
        case .tick(let milliseconds):
            return books.progressTick(at: at(milliseconds))
        case .manifestTaken:
            books.manifestTaken()
        case .checkpointWritten(let due, let written):
            books.checkpointWritten(dueAt: at(due), writtenAt: at(written))
        case .planChanged:
            books.planChanged()
        case .stopped:
            books.transferStopped()
        }
        return []
    }
}
