import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import Testing

@testable import StreamKitDownloads

#if canImport(Glibc)
import Glibc
#endif

/// The runners' failure policy, the kinds of failure, and how a run's end moves its task: pure
/// values, no I/O.
struct DownloadFailurePolicyTests {
    static let policy = DownloadFailurePolicy(
        maximumConsecutiveFailures: 5, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(8))

    /// Waits double from the first one up to the longest; a first wait above the longest is kept
    /// for the first retry only.
    @Test(arguments: [
        (500, 8000, 1, 500), (500, 8000, 2, 1000), (500, 8000, 3, 2000), (500, 8000, 4, 4000),
        (500, 8000, 5, 8000), (500, 8000, 9, 8000), (20, 100, 3, 80), (20, 100, 4, 100), (10000, 8000, 1, 10000),
        (10000, 8000, 2, 8000),
    ])
    func backoff(initial: Int, maximum: Int, failures: Int, expected: Int) {
        let policy = DownloadFailurePolicy(
            maximumConsecutiveFailures: 5, initialBackoff: .milliseconds(initial),
            maximumBackoff: .milliseconds(maximum))
        #expect(policy.backoff(afterFailures: failures) == .milliseconds(expected))
    }

    /// Five transient failures in a row: four waits, then the task fails saying how many came.
    @Test func transientFailuresRunOutAfterTheLimit() {
        var streak = FailureStreak()
        let decisions = (1...5).map { _ in Self.policy.decide(.transient, streak: &streak) }
        #expect(
            decisions == [
                .retry(after: .milliseconds(500)), .retry(after: .seconds(1)), .retry(after: .seconds(2)),
                .retry(after: .seconds(4)), .fail(.transfer, consecutiveFailures: 5),
            ])
    }

    /// Event → decision, with the streak carried along: progress ends a streak, a cancellation
    /// does not count, a permanent failure fails at once.
    @Test func decisionsFollowTheStreak() {
        enum Step {
            case fail(DownloadFailure)
            case progressed
            case reached(Int64)
        }
        let policy = DownloadFailurePolicy(
            maximumConsecutiveFailures: 3, initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(100))
        let steps: [(Step, DownloadFailurePolicy.Decision?)] = [
            (.fail(.transient), .retry(after: .milliseconds(20))),
            (.fail(.cancelled), .cancel),
            (.fail(.transient), .retry(after: .milliseconds(40))),
            (.progressed, nil),
            (.fail(.transient), .retry(after: .milliseconds(20))),
            (.reached(100), nil),
            (.fail(.transient), .retry(after: .milliseconds(20))),
            (.reached(100), nil),
            (.fail(.transient), .retry(after: .milliseconds(40))),
            (.reached(50), nil),
            (.fail(.transient), .fail(.transfer, consecutiveFailures: 3)),
            (.reached(101), nil),
            (.fail(.permanent(.diskFull)), .fail(.diskFull, consecutiveFailures: nil)),
        ]
        var streak = FailureStreak()
        for (index, (step, expected)) in steps.enumerated() {
            switch step {
            case .fail(let failure): #expect(policy.decide(failure, streak: &streak) == expected, "step \(index)")
            case .progressed: streak.progressed()
            case .reached(let bytes): streak.progressed(to: bytes)
            }
        }
        #expect(streak.count == 1)
    }

    /// The error a decision to fail makes: the count of failures in a row, when they ran out.
    @Test func failingErrorNamesTheStreak() {
        let ranOut = DownloadFailurePolicy.error(.transfer, consecutiveFailures: 5, cause: "HTTP 503", taskID: "t")
        #expect(ranOut.kind == .transfer)
        #expect(ranOut.detail == "HTTP 503 (5 errors in a row with no progress)")
        #expect(ranOut.taskID == "t")
        let atOnce = DownloadFailurePolicy.error(
            .diskFull, consecutiveFailures: nil, cause: "write failed", taskID: "t")
        #expect(atOnce.kind == .diskFull)
        #expect(atOnce.detail == "write failed")
    }

    /// A connection's HTTP failure: cancellation first, then a host that does not answer, then
    /// what retrying may cure.
    @Test(arguments: [
        (HTTPClientError(.connectFailed), false, DownloadFailure.unreachable),
        (HTTPClientError(.couldNotResolveHost), false, .unreachable),
        (HTTPClientError(.connectTimeout), false, .unreachable),
        (HTTPClientError(.connectionReset), false, .transient),
        (HTTPClientError(.truncatedBody), false, .transient),
        (HTTPClientError.unexpectedStatus(.serviceUnavailable, url: nil), false, .transient),
        (HTTPClientError.unexpectedStatus(.tooManyRequests, url: nil), false, .transient),
        (HTTPClientError.unexpectedStatus(.notFound, url: nil), false, .permanent(.transfer)),
        (HTTPClientError(.tlsFailure), false, .permanent(.transfer)),
        (HTTPClientError(.connectFailed), true, .cancelled),
        (HTTPClientError.cancelled, false, .cancelled),
    ])
    func httpFailures(error: HTTPClientError, cancelled: Bool, expected: DownloadFailure) {
        #expect(DownloadFailure(error, taskCancelled: cancelled) == expected, "\(error)")
    }

    /// A run of the HLS engine: what a new run cannot fix fails the task at once.
    @Test(arguments: [
        (HLSDownloadError.Kind.playlistUnavailable, DownloadFailure.transient), (.fileFailed, .transient),
        (.rangeMismatch, .transient), (.cancelled, .cancelled), (.invalidPlaylist, .permanent(.transfer)),
        (.noMatchingVariant, .permanent(.transfer)), (.noMatchingRendition, .permanent(.transfer)),
        (.unsupportedURI, .permanent(.transfer)), (.tooManySegments, .permanent(.transfer)),
        (.packageConflict, .permanent(.transfer)), (.writeFailed, .permanent(.transfer)),
        (.decryptionFailed, .permanent(.transfer)), (.invalidKey, .permanent(.transfer)),
    ])
    func hlsFailures(kind: HLSDownloadError.Kind, expected: DownloadFailure) {
        #expect(DownloadFailure(HLSDownloadError(kind), taskCancelled: false) == expected, "\(kind)")
        #expect(DownloadFailure(HLSDownloadError(kind), taskCancelled: true) == .cancelled, "\(kind)")
    }

    /// An HLS run whose requests found the host silent waits for it like a file task.
    @Test(arguments: [HTTPClientError.Kind.connectFailed, .couldNotResolveHost, .connectTimeout])
    func hlsRunsThatFoundTheHostSilent(kind: HTTPClientError.Kind) {
        let error = HLSDownloadError(.playlistUnavailable, underlying: HTTPClientError(kind))
        #expect(DownloadFailure(error, taskCancelled: false) == .unreachable)
        #expect(DownloadFailure(error, taskCancelled: true) == .cancelled)
    }

    /// A silent host: two waits, then the run ends and the task waits for the host; progress in
    /// between starts the count again.
    @Test func aSilentHostIsWaitedForAfterThreeTries() {
        var streak = FailureStreak()
        let decisions = (1...3).map { _ in Self.policy.decide(.unreachable, streak: &streak) }
        #expect(
            decisions == [
                .retry(after: .milliseconds(500)), .retry(after: .seconds(1)), .waitForHost(consecutiveFailures: 3),
            ])
        streak.progressed()
        #expect(Self.policy.decide(.unreachable, streak: &streak) == .retry(after: .milliseconds(500)))
    }

    /// A full disk is told by the failing write's `errno`, with no words to match: ENOSPC and
    /// EDQUOT are `diskFull`, other codes and a message without a code are not.
    @Test(arguments: [
        (Int32?.some(ENOSPC), "", DownloadManagerError.Kind.diskFull), (EDQUOT, "", .diskFull),
        (EACCES, "", .transfer), (EIO, "", .transfer), (nil, "No space left on device", .transfer),
    ])
    func diskFullComesFromErrno(code: Int32?, words: String, expected: DownloadManagerError.Kind) {
        let write = code.map { HTTPClientError.fileWriteFailed(SystemError(code: $0, operation: "pwrite"), detail: "") }
        #expect(write?.errno == code)
        #expect(write?.detail.isEmpty ?? true)
        let error = HLSDownloadError(.writeFailed, detail: words, underlying: write)
        #expect(DownloadFailure(error, taskCancelled: false) == .permanent(expected))
    }

    /// The package's own writes (renames, opens, positional writes, records) keep the `errno` of
    /// the call that failed, so a full disk during an HLS download is `diskFull` too.
    @Test(arguments: [(ENOSPC, DownloadManagerError.Kind.diskFull), (EDQUOT, .diskFull), (EACCES, .transfer)])
    func packageWritesKeepTheirErrno(code: Int32, expected: DownloadManagerError.Kind) {
        let error = HLSDownloadError(writeFailed: SystemError(code: code, operation: "pwrite"), path: "0.ts")
        #expect(error.kind == .writeFailed && error.errno == code && error.path == "0.ts")
        #expect(DownloadFailure(error, taskCancelled: false) == .permanent(expected))
    }

    /// A downloaded byte that could not be written: `diskFull` by `errno`, else `fileSystem`.
    @Test(arguments: [
        (ENOSPC, DownloadManagerError.Kind.diskFull), (EDQUOT, .diskFull), (EACCES, .fileSystem),
        (EIO, .fileSystem), (EBADF, .fileSystem),
    ])
    func writeFailureKind(code: Int32, expected: DownloadManagerError.Kind) {
        #expect(DownloadFailure.writeFailureKind(errno: code) == expected)
    }

    /// The state a run's end leaves its task in, for every state and outcome.
    @Test func runOutcomeMovesTheTask() {
        let failure = DownloadManagerError(.transfer, "HTTP 404", taskID: "t")
        let table: [(DownloadState, DownloadRunOutcome, DownloadState?)] = [
            (.running, .succeeded, .success), (.running, .cancelled, .ready), (.running, .failed(failure), .failed),
            (.stopping, .succeeded, .stopped), (.stopping, .cancelled, .stopped),
            (.stopping, .failed(failure), .stopped),
        ]
        for state in DownloadState.allCases {
            for outcome in [DownloadRunOutcome.succeeded, .cancelled, .failed(failure)] {
                let expected = table.first { $0.0 == state && $0.1 == outcome }?.2
                let next = outcome.nextState(from: state)
                #expect(next == expected, "\(state) \(outcome)")
                if let next { #expect(state.canTransition(to: next), "\(state) -> \(next)") }
            }
        }
    }

    /// What a run threw, as an outcome.
    @Test func runOutcomeFromTheError() {
        struct Other: Error {}
        #expect(DownloadRunOutcome(error: nil, taskID: "t") == .succeeded)
        #expect(DownloadRunOutcome(error: CancellationError(), taskID: "t") == .cancelled)
        #expect(DownloadRunOutcome(error: DownloadManagerError(.cancelled, "stopped"), taskID: "t") == .cancelled)
        guard case .failed(let kept) = DownloadRunOutcome(error: DownloadManagerError(.diskFull, "full"), taskID: "t")
        else {
            Issue.record("not failed")
            return
        }
        #expect(kept.kind == .diskFull)
        guard case .failed(let wrapped) = DownloadRunOutcome(error: Other(), taskID: "t") else {
            Issue.record("not failed")
            return
        }
        #expect(wrapped.kind == .transfer)
        #expect(wrapped.taskID == "t")
    }
}
