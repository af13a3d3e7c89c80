/// A token bucket for receive-rate limits: tokens are bytes, refilled at `rate` a second up to
/// `capacity`. A transfer may take bytes while the bucket holds any, going into debt by up to one
/// chunk, and waits while it is empty or in debt; so the long-run rate is exact and a burst is
/// at most `capacity` plus one chunk. Time is passed in, so tests need no clock.
public struct TokenBucket: Sendable {
    /// Bytes a second.
    public let rate: Int64
    /// The most tokens the bucket holds (the burst allowance).
    public let capacity: Int64
    private var tokens: Double
    private var updated: ContinuousClock.Instant

    /// Creates a full bucket.
    ///
    /// - Parameters:
    ///   - rate: Bytes a second, at least 1.
    ///   - capacity: The burst allowance; by default a twentieth of a second's worth, at least 16 KB.
    ///   - now: The time it is created.
    public init(rate: Int64, capacity: Int64? = nil, now: ContinuousClock.Instant) {
        precondition(rate > 0, "a rate limit must be positive")
        self.rate = rate
        self.capacity = capacity ?? max(16 << 10, rate / 20)
        self.tokens = Double(self.capacity)
        self.updated = now
    }

    /// Whether bytes may be taken now.
    public func isAvailable(now: ContinuousClock.Instant) -> Bool { tokens(at: now) > 0 }

    /// Takes `count` bytes' worth of tokens (the bucket may go into debt).
    public mutating func take(_ count: Int, now: ContinuousClock.Instant) {
        tokens = tokens(at: now) - Double(count)
        if now > updated { updated = now }
    }

    /// How long until bytes may be taken again; zero when they may be now.
    public func delayUntilAvailable(now: ContinuousClock.Instant) -> Duration {
        let available = tokens(at: now)
        if available > 0 { return .zero }
        // Enough time for the debt to be repaid plus one token.
        let seconds = (1 - available) / Double(rate)
        return .microseconds(Int64((seconds * 1_000_000).rounded(.up)))
    }

    /// The tokens the bucket holds at `now`, refilled since the last take.
    private func tokens(at now: ContinuousClock.Instant) -> Double {
        guard now > updated else { return tokens }
        let elapsed = updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(Double(capacity), tokens + seconds * Double(rate))
    }
}
