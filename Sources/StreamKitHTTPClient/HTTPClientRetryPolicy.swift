import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

/// When and how soon to try a failed request again: exponential backoff with jitter and an
/// attempt limit, for transient failures only.
///
/// Retried: connect failures and timeouts, resets and early closes, idle and total timeouts,
/// truncated bodies, and the statuses 408, 429 and 5xx (honouring `Retry-After`). Never other 4xx,
/// TLS failures, malformed responses or unsupported schemes: trying again cannot fix those.
public struct HTTPClientRetryPolicy: Hashable, Sendable {
    /// Attempts in all, the first included; 1 never retries.
    public var maximumAttempts: Int
    /// The delay before the first retry, before jitter.
    public var initialDelay: Duration
    /// Each further delay is the previous one times this.
    public var multiplier: Double
    /// No delay (before jitter) is longer than this.
    public var maximumDelay: Duration
    /// The fraction of each delay that is random: the delay is drawn from `[d × (1 − jitter), d]`.
    public var jitter: Double
    /// A `Retry-After` longer than this gives up instead of waiting.
    public var maximumRetryAfter: Duration
    /// For downloads that resume: an attempt that received new bytes resets the attempt count,
    /// so a long download over a flaky link is limited by failures in a row, not in total.
    public var progressResetsAttempts: Bool

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 5, initialDelay: Duration = .milliseconds(250), multiplier: Double = 2,
        maximumDelay: Duration = .seconds(30), jitter: Double = 0.5, maximumRetryAfter: Duration = .seconds(120),
        progressResetsAttempts: Bool = true
    ) {
        precondition(maximumAttempts >= 1, "at least one attempt")
        precondition((0...1).contains(jitter), "jitter is a fraction")
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumRetryAfter = maximumRetryAfter
        self.progressResetsAttempts = progressResetsAttempts
    }

    /// One attempt, no retries.
    public static let none = HTTPClientRetryPolicy(maximumAttempts: 1)
    /// Five attempts, 250 ms doubling to at most 30 s, half of each delay random.
    public static let `default` = HTTPClientRetryPolicy()

    /// The error kinds a retry may cure.
    public static let retryableKinds: Set<HTTPClientError.Kind> = [
        .couldNotResolveHost, .connectFailed, .connectTimeout, .idleTimeout, .totalTimeout, .connectionReset,
        .emptyResponse, .truncatedBody,
    ]

    /// Whether a response with `status` is worth trying again: 408, 429 and every 5xx.
    public static func isRetryable(status: HTTPStatus) -> Bool {
        status == .requestTimeout || status == .tooManyRequests || status.isServerError
    }

    /// Whether `error` is worth trying again.
    public static func isRetryable(_ error: HTTPClientError) -> Bool {
        if error.kind == .unexpectedStatus, let status = error.status { return isRetryable(status: status) }
        return retryableKinds.contains(error.kind)
    }

    /// The backoff before retry number `retry` (1 for the first), with jitter drawn from `randomUnit`.
    ///
    /// - Parameters:
    ///   - retry: Which retry this is, from 1.
    ///   - randomUnit: A number in `0..<1`.
    /// - Returns: The delay.
    public func backoff(retry: Int, randomUnit: Double) -> Duration {
        let base = initialDelay.secondsValue * pow(multiplier, Double(max(0, retry - 1)))
        let capped = min(base, maximumDelay.secondsValue)
        let jittered = capped * (1 - jitter * min(max(randomUnit, 0), 1))
        return .milliseconds(Int64((jittered * 1000).rounded()))
    }

    /// What to do after attempt number `attempt` (from 1) failed with `error`.
    ///
    /// - Parameters:
    ///   - attempt: The attempt that failed, from 1 (counting only attempts in a row when
    ///     progress resets the count).
    ///   - error: Why it failed.
    ///   - randomUnit: A number in `0..<1` for the jitter.
    ///   - now: The current time, for a `Retry-After` date.
    /// - Returns: The delay before the next attempt, or `nil` to give up.
    public func delay(afterAttempt attempt: Int, error: HTTPClientError, randomUnit: Double, now: Date) -> Duration? {
        guard attempt < maximumAttempts, Self.isRetryable(error) else { return nil }
        let backoff = backoff(retry: attempt, randomUnit: randomUnit)
        guard let retryAfter = error.retryAfter else { return backoff }
        let requested = retryAfter.delay(now: now)
        guard requested <= maximumRetryAfter else { return nil }
        return max(backoff, requested)
    }
}

/// How retries wait, draw jitter and read the time: live by default, scripted in tests.
public struct HTTPClientRetryTiming: Sendable {
    /// Waits for a duration (throws when the task is cancelled).
    public var sleep: @Sendable (Duration) async throws -> Void
    /// A random number in `0..<1`.
    public var randomUnit: @Sendable () -> Double
    /// The current wall-clock time (for `Retry-After` dates).
    public var now: @Sendable () -> Date

    /// Creates a timing source.
    public init(
        sleep: @escaping @Sendable (Duration) async throws -> Void, randomUnit: @escaping @Sendable () -> Double,
        now: @escaping @Sendable () -> Date
    ) {
        self.sleep = sleep
        self.randomUnit = randomUnit
        self.now = now
    }

    /// The continuous clock, the system random generator, and the system time.
    public static let live = HTTPClientRetryTiming(
        sleep: { try await Task.sleep(for: $0) }, randomUnit: { Double.random(in: 0..<1) }, now: { Date() })

    /// Sleeps that return at once and are recorded, seeded jitter, and a fixed time: for tests.
    ///
    /// - Parameters:
    ///   - seed: Seeds the jitter generator.
    ///   - now: The time every call to `now` returns.
    ///   - recorder: Collects every requested sleep.
    public static func recording(
        seed: UInt64, now: Date = Date(timeIntervalSince1970: 1_700_000_000), recorder: SleepRecorder
    ) -> HTTPClientRetryTiming {
        let generator = Mutex(SplitMix64(seed: seed))
        return HTTPClientRetryTiming(
            sleep: { duration in recorder.record(duration) },
            randomUnit: { generator.withLock { Double.random(in: 0..<1, using: &$0) } },
            now: { now })
    }

    /// The sleeps a ``recording(seed:now:recorder:)`` timing was asked for.
    public final class SleepRecorder: Sendable {
        private let sleeps = Mutex<[Duration]>([])
        /// Creates an empty recorder.
        public init() {}
        /// Every sleep requested, in order.
        public var recorded: [Duration] { sleeps.withLock { $0 } }
        func record(_ duration: Duration) { sleeps.withLock { $0.append(duration) } }
    }
}
