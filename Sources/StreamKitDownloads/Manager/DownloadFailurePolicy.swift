/// The errors in a row a task's runner has met with no progress in between.
struct FailureStreak: Hashable, Sendable {
    /// Failures since the last progress.
    private(set) var count = 0
    /// The most bytes any attempt reached (for ``progressed(to:)``).
    private var bytesReached: Int64 = -1

    /// A byte was written: the streak ends.
    mutating func progressed() { count = 0 }

    /// An attempt ended having reached `bytes`: the streak ends when that is more than any
    /// attempt reached before.
    mutating func progressed(to bytes: Int64) {
        if bytes > bytesReached { count = 0 }
        bytesReached = max(bytesReached, bytes)
    }

    mutating func failed() -> Int {
        count += 1
        return count
    }
}

/// When a running task tries again and when it gives up, shared by the file and the HLS runner:
/// every failure counts, progress ends the count, a transient failure waits and tries again
/// until ``maximumConsecutiveFailures`` came in a row, anything else fails the task at once.
/// Waits start at ``initialBackoff`` and double up to ``maximumBackoff``, with no jitter.
///
/// Which failures are transient comes from ``HTTPClientRetryPolicy/isRetryable(_:)``. A
/// server's `Retry-After` does not change the wait here: within a run, the HTTP client and
/// the HLS engine honour it.
struct DownloadFailurePolicy: Hashable, Sendable {
    /// Errors in a row, with no progress in between, after which the task fails.
    var maximumConsecutiveFailures: Int
    /// The wait after the first error in a row.
    var initialBackoff: Duration
    /// The longest wait.
    var maximumBackoff: Duration

    /// What the runner does after a failure.
    enum Decision: Hashable, Sendable {
        /// Ends the run as cancelled: the task goes back to `ready`, or to `stopped` when it
        /// was being stopped.
        case cancel
        /// Waits, then tries again; the task stays `running`.
        case retry(after: Duration)
        /// The task fails with an error of `kind`; `consecutiveFailures` is set when the failures
        /// in a row ran out (the error then says how many).
        case fail(DownloadManagerError.Kind, consecutiveFailures: Int?)
        /// The origin host did not answer `consecutiveFailures` times in a row: the run ends and
        /// the task waits for the host (`hostUnreachable`).
        case waitForHost(consecutiveFailures: Int)
    }

    /// Connection failures in a row after which a task waits for its host rather than trying on:
    /// a host that refused this often is down, not blinking.
    static let unreachableTries = 3

    init(maximumConsecutiveFailures: Int, initialBackoff: Duration, maximumBackoff: Duration) {
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// The policy of `options`.
    init(_ options: RangedFileOptions) {
        self.init(
            maximumConsecutiveFailures: options.maximumConsecutiveFailures, initialBackoff: options.initialBackoff,
            maximumBackoff: options.maximumBackoff)
    }

    /// Counts `failure` in `streak` (unless cancelled) and decides what follows.
    func decide(_ failure: DownloadFailure, streak: inout FailureStreak) -> Decision {
        if failure == .cancelled { return .cancel }
        let failures = streak.failed()
        switch failure {
        case .cancelled:
            return .cancel
        case .permanent(let kind):
            return .fail(kind, consecutiveFailures: nil)
        case .transient:
            guard failures < maximumConsecutiveFailures else {
                return .fail(.transfer, consecutiveFailures: failures)
            }
            return .retry(after: backoff(afterFailures: failures))
        case .unreachable:
            guard failures < min(Self.unreachableTries, maximumConsecutiveFailures) else {
                return .waitForHost(consecutiveFailures: failures)
            }
            return .retry(after: backoff(afterFailures: failures))
        }
    }

    /// The wait after `failures` errors in a row (from 1).
    func backoff(afterFailures failures: Int) -> Duration {
        var delay = initialBackoff
        for _ in 1..<max(1, failures) { delay = min(maximumBackoff, delay * 2) }
        return delay
    }

    /// The error a task fails with after a ``Decision/fail(_:consecutiveFailures:)``.
    ///
    /// - Parameters:
    ///   - kind: The decision's kind.
    ///   - consecutiveFailures: The decision's count.
    ///   - cause: The last failure, in words.
    ///   - taskID: The task.
    /// - Returns: The error.
    static func error(
        _ kind: DownloadManagerError.Kind, consecutiveFailures: Int?, cause: String, taskID: String
    ) -> DownloadManagerError {
        let detail = consecutiveFailures.map { "\(cause) (\($0) errors in a row with no progress)" } ?? cause
        return DownloadManagerError(kind, detail, taskID: taskID)
    }
}

extension DownloadFailurePolicy.Decision {
    /// Carries the decision out in a task's run: throws `CancellationError` to cancel, sleeps out
    /// a retry's delay (the caller then tries again), or throws the task's error.
    ///
    /// - Parameters:
    ///   - taskID: The task the error names.
    ///   - unreachable: The kind of error when the decision is to wait for the host.
    ///   - cause: What the error says of the failure, by its kind.
    func carryOut(
        taskID: String, unreachable: DownloadManagerError.Kind = .hostUnreachable,
        cause: (DownloadManagerError.Kind) -> String
    ) async throws {
        switch self {
        case .cancel:
            throw CancellationError()
        case .retry(let delay):
            try await Task.sleep(for: delay)
        case .fail(let kind, let failures):
            throw DownloadFailurePolicy.error(kind, consecutiveFailures: failures, cause: cause(kind), taskID: taskID)
        case .waitForHost(let failures):
            throw DownloadFailurePolicy.error(
                unreachable, consecutiveFailures: failures, cause: cause(unreachable), taskID: taskID)
        }
    }
}
