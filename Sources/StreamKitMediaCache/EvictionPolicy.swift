/// Which entries go so that more bytes fit under the cache's cap: the least recently used first
/// (the lower key first among equals), never one that is pinned, in use or holds nothing.
///
/// Pure: it picks from a snapshot of the index; ``CacheStore`` deletes what it picked.
struct EvictionPolicy: Sendable {
    /// An entry of the index as eviction sees it.
    struct Candidate: Hashable, Sendable {
        var key: String
        /// Bytes on disk or reserved for writes under way: what evicting it frees.
        var bytes: Int64
        /// When it was last used (seconds since 1970).
        var lastAccess: Double
        /// Pinned entries do not count against the cap, and stay.
        var isPinned: Bool
        /// Readers or fetches hold it.
        var isInUse: Bool
    }

    /// The entries to evict, in order, and whether the bytes fit once they are gone (when not,
    /// every entry that may go is among the victims).
    struct Decision: Hashable, Sendable {
        var victims: [String]
        var fits: Bool
    }

    /// The cap on the bytes of unpinned entries.
    let byteLimit: Int64

    /// The victims to evict before `count` more bytes fit.
    ///
    /// - Parameters:
    ///   - count: The bytes to make room for (0: only get back under the cap).
    ///   - usage: The bytes of unpinned entries now.
    ///   - candidates: The index's entries; read only when something must go.
    /// - Returns: The victims, least recently used first, and whether the bytes fit.
    func victims(toFit count: Int64, usage: Int64, among candidates: some Sequence<Candidate>) -> Decision {
        var usage = usage
        guard usage + count > byteLimit else { return Decision(victims: [], fits: true) }
        var eligible = candidates.filter { !$0.isPinned && !$0.isInUse && $0.bytes > 0 }
        var victims: [String] = []
        // Most evictions free room with the first victim or two: pick each as the least recently
        // used of those left rather than sorting them all.
        while usage + count > byteLimit {
            guard
                let index = eligible.indices.min(by: {
                    (eligible[$0].lastAccess, eligible[$0].key) < (eligible[$1].lastAccess, eligible[$1].key)
                })
            else { return Decision(victims: victims, fits: false) }
            eligible.swapAt(index, eligible.count - 1)
            let victim = eligible.removeLast()
            victims.append(victim.key)
            usage -= victim.bytes
        }
        return Decision(victims: victims, fits: true)
    }
}
