import Testing

@testable import StreamKitMediaCache

/// Which entries eviction picks, from a snapshot of the index (pure: no files, no index).
@Suite struct EvictionPolicyTests {
    typealias Candidate = EvictionPolicy.Candidate

    /// An entry of `bytes` last used at `lastAccess`.
    static func entry(
        _ key: String, _ bytes: Int64, at lastAccess: Double, pinned: Bool = false, inUse: Bool = false
    ) -> Candidate {
        Candidate(key: key, bytes: bytes, lastAccess: lastAccess, isPinned: pinned, isInUse: inUse)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var limit: Int64 = 100
        var entries: [Candidate]
        /// Bytes to make room for.
        var count: Int64
        var victims: [String]
        var fits = true

        var testDescription: String { name }

        /// The unpinned bytes, as the store counts them.
        var usage: Int64 { entries.filter { !$0.isPinned }.reduce(0) { $0 + $1.bytes } }
    }

    static let cases: [Case] = [
        .init(
            name: "room enough: nothing goes", entries: [entry("a", 40, at: 1), entry("b", 40, at: 2)], count: 20,
            victims: []),
        .init(
            name: "least recently used first",
            entries: [entry("a", 40, at: 3), entry("b", 40, at: 1), entry("c", 20, at: 2)],
            count: 30, victims: ["b"]),
        .init(
            name: "as many as it takes, in order",
            entries: [entry("a", 40, at: 3), entry("b", 40, at: 1), entry("c", 20, at: 2)], count: 70,
            victims: ["b", "c", "a"]),
        .init(
            name: "freeing exactly enough stops there",
            entries: [entry("a", 30, at: 1), entry("b", 30, at: 2), entry("c", 40, at: 3)], count: 30,
            victims: ["a"]),
        .init(
            name: "one byte short takes one more",
            entries: [entry("a", 29, at: 1), entry("b", 30, at: 2), entry("c", 41, at: 3)], count: 30,
            victims: ["a", "b"]),
        .init(
            name: "ties go by key", entries: [entry("b", 50, at: 1), entry("a", 50, at: 1), entry("c", 0, at: 0)],
            count: 10, victims: ["a"]),
        .init(
            name: "pinned entries stay",
            entries: [entry("p", 50, at: 0, pinned: true), entry("a", 60, at: 1), entry("b", 40, at: 2)], count: 10,
            victims: ["a"]),
        .init(
            name: "a pinned entry over the cap stays and does not count",
            entries: [entry("p", 500, at: 0, pinned: true), entry("a", 50, at: 1)], count: 40, victims: []),
        .init(
            name: "entries in use stay",
            entries: [entry("a", 50, at: 1, inUse: true), entry("b", 30, at: 2), entry("c", 20, at: 3)], count: 20,
            victims: ["b"]),
        .init(
            name: "empty entries are not victims", entries: [entry("e", 0, at: 0), entry("a", 100, at: 1)], count: 1,
            victims: ["a"]),
        .init(
            name: "not enough to evict: every entry that may go, and no fit",
            entries: [entry("a", 50, at: 1, inUse: true), entry("b", 30, at: 2), entry("p", 80, at: 0, pinned: true)],
            count: 80, victims: ["b"], fits: false),
        .init(
            name: "bytes larger than the cap never fit", entries: [entry("a", 10, at: 1)], count: 101, victims: ["a"],
            fits: false),
        .init(
            name: "over the cap with nothing to add", limit: 50,
            entries: [entry("a", 30, at: 2), entry("b", 30, at: 1), entry("c", 30, at: 3)], count: 0,
            victims: ["b", "a"]),
    ]

    @Test(arguments: cases)
    func victims(_ row: Case) {
        let decision = EvictionPolicy(byteLimit: row.limit).victims(
            toFit: row.count, usage: row.usage, among: row.entries)
        #expect(decision == EvictionPolicy.Decision(victims: row.victims, fits: row.fits))
    }

    /// Nothing over the cap: the snapshot is not even read.
    @Test func underTheCapTheEntriesAreNotRead() {
        let entries = [Self.entry("a", 10, at: 1)].lazy.map { (entry: Candidate) -> Candidate in
            Issue.record("read \(entry.key)")
            return entry
        }
        let decision = EvictionPolicy(byteLimit: 100).victims(toFit: 90, usage: 10, among: entries)
        #expect(decision == EvictionPolicy.Decision(victims: [], fits: true))
    }

    /// Every case again with its entries split between memory and the index (in eviction order):
    /// the same victims, whichever side each entry is on.
    @Test(arguments: cases)
    func victimsFromMemoryAndTheIndex(_ row: Case) {
        for split in 0...row.entries.count {
            let loaded = Array(row.entries[..<split])
            let stored = row.entries[split...].sorted { ($0.lastAccess, $0.key) < ($1.lastAccess, $1.key) }
            let decision = EvictionPolicy(byteLimit: row.limit).victims(
                toFit: row.count, usage: row.usage, loaded: loaded, stored: stored)
            #expect(decision == EvictionPolicy.Decision(victims: row.victims, fits: row.fits), "split at \(split)")
        }
    }

    /// A loaded entry's figures are the newer: its stale row in the index is passed over.
    @Test func theIndexRowOfALoadedEntryIsPassedOver() {
        // "a" was used again (at 9) since the index saved it (at 1), and is in use.
        let loaded = [Self.entry("a", 50, at: 9, inUse: true)]
        let stored = [Self.entry("a", 50, at: 1), Self.entry("b", 50, at: 2)]
        let decision = EvictionPolicy(byteLimit: 100).victims(toFit: 40, usage: 100, loaded: loaded, stored: stored)
        #expect(decision == EvictionPolicy.Decision(victims: ["b"], fits: true))
    }

    /// The index is read only as far as the victims go: a cache of any size costs one or two rows
    /// for an eviction of one or two entries.
    @Test func theIndexIsReadOnlyAsFarAsTheVictimsGo() {
        let read = ReadCounter()
        let stored = (0..<10_000).lazy.map { index -> Candidate in
            read.count += 1
            return Self.entry("k\(index)", 10, at: Double(index))
        }
        let decision = EvictionPolicy(byteLimit: 100_000).victims(
            toFit: 15, usage: 100_000, loaded: [], stored: stored)
        #expect(decision == EvictionPolicy.Decision(victims: ["k0", "k1"], fits: true))
        #expect(read.count <= 3)
    }

    final class ReadCounter: @unchecked Sendable {
        var count = 0
    }
}
