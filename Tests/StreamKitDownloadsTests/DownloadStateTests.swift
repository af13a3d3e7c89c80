import Foundation
import StreamKitCore
import Testing

@testable import StreamKitDownloads

/// The state table and the piece board: pure values, no I/O.
struct DownloadStateTests {
    /// Every pair of states: allowed exactly when the documented table lists it, and an illegal
    /// move throws `illegalTransition` naming both states.
    @Test func everyTransitionFollowsTheTable() throws {
        let table: [DownloadState: Set<DownloadState>] = [
            .preparing: [.ready, .stopped, .failed, .removing],
            .ready: [.running, .stopped, .waiting, .removing],
            .running: [.stopping, .success, .failed, .ready, .waiting, .removing],
            .waiting: [.ready, .stopped, .removing],
            .stopping: [.stopped, .removing],
            .stopped: [.ready, .removing],
            .success: [.removing],
            .failed: [.ready, .removing],
            .removing: [],
        ]
        #expect(DownloadState.allCases.count == 9)
        for from in DownloadState.allCases {
            for to in DownloadState.allCases {
                let allowed = table[from]!.contains(to)
                #expect(from.canTransition(to: to) == allowed, "\(from) -> \(to)")
                if allowed {
                    #expect(try from.transition(to: to) == to)
                } else {
                    #expect {
                        try from.transition(to: to)
                    } throws: { error in
                        let error = error as? DownloadManagerError
                        return error?.kind == .illegalTransition && error?.detail.contains("\(from) to \(to)") == true
                    }
                }
            }
        }
    }

    /// After a crash: running comes back ready, stopping ends stopped, an interrupted add is
    /// stopped; each of those is itself a legal move; the rest stay.
    @Test func recoveredStates() {
        #expect(DownloadState.running.recovered == .ready)
        #expect(DownloadState.stopping.recovered == .stopped)
        #expect(DownloadState.preparing.recovered == .stopped)
        #expect(DownloadState.waiting.recovered == .ready)
        for state in DownloadState.allCases where state.recovered != state {
            #expect(state.canTransition(to: state.recovered))
        }
        for state in [DownloadState.ready, .stopped, .success, .failed, .removing] {
            #expect(state.recovered == state)
        }
    }

    /// Four connections on an empty file split it into four equal pieces by stealing halves.
    @Test func fourConnectionsSplitEvenly() {
        var board = PieceBoard(length: 4096, done: ByteRangeSet(), minimumSteal: 16)
        #expect(board.nextPiece(for: 0) == ByteRange(0, 4096))
        #expect(board.nextPiece(for: 1) == ByteRange(2048, 4096))
        #expect(board.nextPiece(for: 2) == ByteRange(1024, 2048))
        #expect(board.nextPiece(for: 3) == ByteRange(3072, 4096))
        #expect(board.assigned[0] == ByteRange(0, 1024))
        #expect(board.assigned[1] == ByteRange(2048, 3072))
        #expect(board.free.isEmpty)
    }

    /// A connection that finishes takes half of the largest remaining piece; the victim stops where
    /// the half begins, and claims never overlap.
    @Test func finishedConnectionStealsHalfOfTheLargest() {
        var board = PieceBoard(length: 1000, done: ByteRangeSet(), minimumSteal: 10)
        _ = board.nextPiece(for: 0)
        _ = board.nextPiece(for: 1)  // 500..<1000
        // Connection 1 finishes fast.
        #expect(board.claim(1, ByteRange(500, 1000)) == ByteRange(500, 1000))
        board.markDone(ByteRange(500, 1000))
        #expect(board.isFinished(1))
        // Connection 0 wrote 100 bytes; connection 1 takes the upper half of the 400 left.
        #expect(board.claim(0, ByteRange(0, 100)) == ByteRange(0, 100))
        board.markDone(ByteRange(0, 100))
        #expect(board.nextPiece(for: 1) == ByteRange(300, 500))
        // Connection 0's next chunk crosses 300: only the part below is its to write.
        #expect(board.claim(0, ByteRange(100, 350)) == ByteRange(100, 300))
        #expect(board.isFinished(0))
        #expect(board.claim(0, ByteRange(300, 310)) == nil)
        board.markDone(ByteRange(100, 300))
        #expect(board.claim(1, ByteRange(300, 500)) == ByteRange(300, 500))
        board.markDone(ByteRange(300, 500))
        #expect(board.isComplete)
        // Nothing left worth taking.
        #expect(board.nextPiece(for: 0) == nil)
    }

    /// Requests go a window at a time, and a half is taken only past what its owner asked for:
    /// the split moves up to the end of the owner's request, and a piece wholly asked for is
    /// left alone. A connection that ends its request goes on with its piece.
    @Test func halvesAreTakenOnlyFromBytesNotYetAskedFor() {
        var board = PieceBoard(length: 1000, done: ByteRangeSet(), minimumSteal: 10)
        #expect(board.request(0, window: 600) == ByteRange(0, 600))
        // Half of 0..<1000 would start at 500, inside connection 0's request: it starts at 600.
        #expect(board.request(1, window: 100) == ByteRange(600, 700))
        #expect(board.assigned[0] == ByteRange(0, 600))
        #expect(board.assigned[1] == ByteRange(600, 1000))
        // Connection 0 has asked for all it has: the next connection splits connection 1's piece
        // past its request (at 800, the middle).
        #expect(board.request(2, window: 500) == ByteRange(800, 1000))
        #expect(board.assigned[1] == ByteRange(600, 800))
        // Connection 1 asks for 600..<700: a fourth connection takes only 700..<800.
        #expect(board.request(1, window: 100) == ByteRange(600, 700))
        #expect(board.request(3, window: 100) == ByteRange(700, 800))
        #expect(board.assigned[1] == ByteRange(600, 700))
        // Everything is asked for: nothing left to take.
        #expect(board.nextPiece(for: 4) == nil)
        // Connection 2 wrote 100 of its 200 bytes and asks for a smaller window next time: it goes
        // on with its own piece.
        #expect(board.claim(2, ByteRange(800, 900)) == ByteRange(800, 900))
        board.markDone(ByteRange(800, 900))
        #expect(board.request(2, window: 50) == ByteRange(900, 950))
        #expect(board.requestedEnd[2] == 950)
    }

    /// A window grown past a connection's share of the file asks for that share only: one
    /// connection that fetches fast before the others start leaves them bytes to take.
    @Test func aRequestNeverAsksForMoreThanAConnectionsShare() {
        var window = RangedFileDownloader.Window()
        window.requestTook(.milliseconds(10), fullWindow: true)
        #expect(window.bytes == 2 << 20)
        let size = window.bytes(forLength: 4 << 20, connections: 4, 256 << 10)
        #expect(size == 1 << 20)
        #expect(window.bytes(forLength: 1 << 30, connections: 4, 256 << 10) == 2 << 20)
        #expect(window.bytes(forLength: 100, connections: 4, 256 << 10) == 256 << 10)
        var board = PieceBoard(length: 4 << 20, done: ByteRangeSet(), minimumSteal: 256 << 10)
        for start in [Int64(0), 1 << 20] {
            let piece = board.request(0, window: size)
            #expect(piece == ByteRange(start, start + (1 << 20)))
            _ = board.claim(0, piece!)
            board.markDone(piece!)
        }
        // The late connection takes the upper half of what connection 0 has not asked for.
        #expect(board.request(1, window: size) == ByteRange(3 << 20, 4 << 20))
    }

    /// Bytes claimed and being written are nobody else's: not free, so not handed out again,
    /// until they are done (or the writer fails, when they are free again).
    @Test func bytesBeingWrittenAreNotFree() {
        var board = PieceBoard(length: 1000, done: ByteRangeSet(), minimumSteal: 10)
        #expect(board.request(0, window: 300) == ByteRange(0, 300))
        #expect(board.claim(0, ByteRange(0, 100)) == ByteRange(0, 100))
        #expect(board.free.isEmpty)
        #expect(board.request(1, window: 1000) == ByteRange(550, 1000))
        board.markDone(ByteRange(0, 100))
        #expect(board.free.isEmpty)
        #expect(board.claim(0, ByteRange(100, 200)) == ByteRange(100, 200))
        board.release(0)
        #expect(board.free == ByteRangeSet([ByteRange(100, 550)]))
    }

    /// A resumed board hands out only the gaps, and a failed connection's remainder becomes free.
    @Test func resumeTakesOnlyGapsAndReleaseFreesTheRest() {
        var board = PieceBoard(
            length: 1000, done: ByteRangeSet([ByteRange(0, 200), ByteRange(600, 1000)]), minimumSteal: 1000)
        #expect(board.nextPiece(for: 0) == ByteRange(200, 600))
        #expect(board.nextPiece(for: 1) == nil)  // halves below minimumSteal
        #expect(board.claim(0, ByteRange(200, 300)) == ByteRange(200, 300))
        board.markDone(ByteRange(200, 300))
        board.release(0)
        #expect(board.free == ByteRangeSet([ByteRange(300, 600)]))
    }
}
