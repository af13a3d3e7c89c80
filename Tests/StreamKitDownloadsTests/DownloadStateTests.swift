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
