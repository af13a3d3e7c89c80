/// Counters of an ``HTTPClient``, for monitoring and tests.
public struct HTTPClientStatistics: Hashable, Sendable {
    /// Transfers started (handed to libcurl, or to the client's own connections).
    public var transfersStarted = 0
    /// Transfers that ended (completed, failed or cancelled after they started).
    public var transfersFinished = 0
    /// Transfers running now.
    public var activeTransfers = 0
    /// New connections opened; fewer than transfers when connections are reused.
    public var connectionsOpened = 0
    /// Times a transfer was paused because its reader lagged.
    public var bodyPauses = 0
    /// Transfers carried over the client's own connections (plain-http bodies written to files,
    /// ``HTTPClientRequest/bodyIsWrittenToFile``) rather than libcurl; counted in the totals above.
    public var ownConnectionTransfers = 0
    /// Body bytes moved from a socket into a file with `splice`, never copied through user space.
    public var bytesSpliced: Int64 = 0
    /// Transfer objects still alive, each holding a libcurl handle: back to zero when every
    /// response was read or dropped (a leak check).
    public var liveTransferObjects = 0

    /// All zero.
    public init() {}

    /// Adds another backend's counters to these.
    mutating func add(_ other: HTTPClientStatistics) {
        transfersStarted += other.transfersStarted
        transfersFinished += other.transfersFinished
        activeTransfers += other.activeTransfers
        connectionsOpened += other.connectionsOpened
        bodyPauses += other.bodyPauses
        liveTransferObjects += other.liveTransferObjects
        ownConnectionTransfers += other.ownConnectionTransfers
        bytesSpliced += other.bytesSpliced
    }
}
