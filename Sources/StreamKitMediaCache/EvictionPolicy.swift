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
        guard usage + count > byteLimit else { return Decision(victims: [], fits: true) }
        return victims(toFit: count, usage: usage, loaded: Array(candidates), stored: EmptyCollection())
    }

    /// The victims to evict before `count` more bytes fit, from two sources: the entries a store
    /// holds in memory (in any order, their figures current) and the rest of the index, in
    /// eviction order (least recently used first, the lower key first among equals), read only as
    /// far as needed. A stored candidate with the key of a loaded one is passed over: the loaded
    /// figures are the newer.
    ///
    /// - Returns: The victims, least recently used first, and whether the bytes fit.
    func victims(
        toFit count: Int64, usage: Int64, loaded: [Candidate], stored: some Sequence<Candidate>
    ) -> Decision {
        var usage = usage
        guard usage + count > byteLimit else { return Decision(victims: [], fits: true) }
        func mayGo(_ candidate: Candidate) -> Bool { !candidate.isPinned && !candidate.isInUse && candidate.bytes > 0 }
        func precedes(_ a: Candidate, _ b: Candidate) -> Bool { (a.lastAccess, a.key) < (b.lastAccess, b.key) }
        let loadedKeys = Set(loaded.map(\.key))
        var memory = loaded.filter(mayGo).sorted(by: precedes)[...]
        var index = stored.lazy.filter { mayGo($0) && !loadedKeys.contains($0.key) }.makeIterator()
        var nextStored = index.next()
        var victims: [String] = []
        while usage + count > byteLimit {
            let victim: Candidate
            if let fromIndex = nextStored, memory.first.map({ precedes(fromIndex, $0) }) ?? true {
                victim = fromIndex
                nextStored = index.next()
            } else if let fromMemory = memory.popFirst() {
                victim = fromMemory
            } else {
                return Decision(victims: victims, fits: false)
            }
            victims.append(victim.key)
            usage -= victim.bytes
        }
        return Decision(victims: victims, fits: true)
    }
}
