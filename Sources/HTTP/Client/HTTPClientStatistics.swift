/// Counters of an ``HTTPClient``, for monitoring and tests.
public struct HTTPClientStatistics: Hashable, Sendable {
    /// Transfers handed to libcurl.
    public var transfersStarted = 0
    /// Transfers that ended (completed, failed or cancelled after they started).
    public var transfersFinished = 0
    /// Transfers running now.
    public var activeTransfers = 0
    /// New connections opened; fewer than transfers when connections are reused.
    public var connectionsOpened = 0
    /// Times a transfer was paused because its reader lagged.
    public var bodyPauses = 0
    /// Transfer objects still alive, each holding a libcurl handle: back to zero when every
    /// response was read or dropped (a leak check).
    public var liveTransferObjects = 0

    /// All zero.
    public init() {}
}
