/// The server's open connections, with no I/O: who each belongs to, whether it is idle, and,
/// when a new connection arrives at a limit, which idle ones to close to admit it.
///
/// Idle means between requests: nothing of a request received, no response being produced or
/// written. Only idle connections are ever chosen, longest idle first (as nginx reuses its
/// keep-alive connections), so holding many idle connections cannot lock other clients out, and
/// a request in progress or a slow download is never cut. Two limits apply: the server's
/// (`maximumConnections`) and each client address's (`maximumConnectionsPerClient`); a new
/// connection over its client's limit displaces that client's longest-idle connection, never
/// another client's. When the limit is reached and nothing is idle, the new connection is refused.
///
/// A connection chosen for closing stops counting at once. Its owner may find it busy after all
/// (a request arrived meanwhile) and keep it: it then counts again, and the next admission closes
/// as many as it takes to get back under the limit.
struct HTTPConnectionTable: Sendable {
    /// A connection to close, and the event loop that owns it.
    struct Eviction: Hashable, Sendable {
        let connection: UInt64
        let loop: Int
    }

    /// What to do with a new connection.
    enum Admission: Hashable, Sendable {
        /// Keep it, after closing these idle connections.
        case admit(closing: [Eviction])
        /// Answer 503 and close it: the limit is reached and nothing is idle.
        case refuse
    }

    private struct Entry: Sendable {
        let loop: Int
        let client: String
        /// When it became idle; `nil` while busy.
        var idleSince: ContinuousClock.Instant?
        /// Chosen for closing; no longer counted.
        var closing = false
    }

    /// Connections open at once.
    let maximumConnections: Int
    /// Connections open at once from one client address.
    let maximumConnectionsPerClient: Int
    private var entries: [UInt64: Entry] = [:]
    private var perClient: [String: Int] = [:]
    /// Connections counted against the limits (those being closed are not).
    private(set) var count = 0

    init(maximumConnections: Int, maximumConnectionsPerClient: Int) {
        self.maximumConnections = max(1, maximumConnections)
        self.maximumConnectionsPerClient = max(1, min(maximumConnectionsPerClient, maximumConnections))
    }

    /// Connections counted against `client`'s limit.
    func count(of client: String) -> Int { perClient[client] ?? 0 }

    /// Decides on a new connection `id` from `client`, to be owned by `loop`. An admitted
    /// connection is entered as idle since `now` (it has sent nothing yet); one refused is not entered.
    mutating func admit(_ id: UInt64, client: String, loop: Int, now: ContinuousClock.Instant) -> Admission {
        var chosen: [UInt64] = []
        if count(of: client) >= maximumConnectionsPerClient {
            guard let oldest = longestIdle(excluding: chosen, client: client) else { return .refuse }
            chosen.append(oldest)
        }
        // Over the limit by more than one only after evictions were declined: catch up now.
        while count - chosen.count >= maximumConnections {
            guard let oldest = longestIdle(excluding: chosen, client: nil) else { return .refuse }
            chosen.append(oldest)
        }
        var evictions: [Eviction] = []
        for victim in chosen {
            guard var entry = entries[victim] else { continue }
            entry.closing = true
            entries[victim] = entry
            uncount(entry.client)
            evictions.append(Eviction(connection: victim, loop: entry.loop))
        }
        entries[id] = Entry(loop: loop, client: client, idleSince: now)
        perClient[client, default: 0] += 1
        count += 1
        return .admit(closing: evictions)
    }

    /// Connection `id` received bytes of a request.
    mutating func becameBusy(_ id: UInt64) {
        entries[id]?.idleSince = nil
    }

    /// Connection `id` finished its response and waits for the next request.
    mutating func becameIdle(_ id: UInt64, now: ContinuousClock.Instant) {
        entries[id]?.idleSince = now
    }

    /// Connection `id`, chosen for closing, was busy when its owner came to close it: it stays.
    mutating func evictionDeclined(_ id: UInt64) {
        guard var entry = entries[id], entry.closing else { return }
        entry.closing = false
        entries[id] = entry
        perClient[entry.client, default: 0] += 1
        count += 1
    }

    /// Connection `id` is closed.
    mutating func removed(_ id: UInt64) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if !entry.closing { uncount(entry.client) }
    }

    private mutating func uncount(_ client: String) {
        count -= 1
        let left = (perClient[client] ?? 1) - 1
        perClient[client] = left > 0 ? left : nil
    }

    /// The counted idle connection (of `client`, when given) idle the longest, ties to the lowest id.
    private func longestIdle(excluding chosen: [UInt64], client: String?) -> UInt64? {
        var best: (id: UInt64, since: ContinuousClock.Instant)?
        for (id, entry) in entries where !entry.closing {
            guard let since = entry.idleSince, client == nil || entry.client == client, !chosen.contains(id) else {
                continue
            }
            if let current = best, current.since < since || (current.since == since && current.id < id) { continue }
            best = (id, since)
        }
        return best?.id
    }
}
