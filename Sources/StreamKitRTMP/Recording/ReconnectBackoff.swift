/// When a recording reopens a dropped connection: how many attempts are left and how long to
/// wait before each, the wait doubling from ``initialDelay`` up to ``maximumDelay``.
///
/// A connection that delivers media again resets it, so every drop gets the full allowance.
public struct ReconnectBackoff: Hashable, Sendable {
    /// Attempts allowed after each drop; `nil` for no limit.
    public let limit: Int?
    public let initialDelay: Duration
    public let maximumDelay: Duration
    /// Attempts made since the last connection that delivered media.
    public private(set) var attempts = 0

    public init(limit: Int?, initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30)) {
        self.limit = limit
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait before the next attempt, counting it; `nil` when no attempt is left.
    public mutating func nextDelay() -> Duration? {
        if let limit, attempts >= limit { return nil }
        var delay = initialDelay
        for _ in 0..<min(attempts, 32) where delay < maximumDelay { delay *= 2 }
        attempts += 1
        return min(delay, maximumDelay)
    }

    /// A connection delivered media: the next drop starts over.
    public mutating func reset() { attempts = 0 }
}
