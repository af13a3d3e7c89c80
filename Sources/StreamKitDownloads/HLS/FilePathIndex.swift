/// An open-addressing table of indices into a collection its owner holds, found by a hash the
/// owner gives and confirmed by a test of the element at each candidate index: 4 bytes a slot, at
/// most half of the slots used, the keys never copied. A dictionary from a path (or a resource)
/// to an index took 30 to 80 bytes an entry: its keys a copy of each, its doublings.
///
/// The owner keeps the indexed collection the same from one call to the next, and gives the same
/// hash for an element every time (`rehashing` hashes the element at an index when the table
/// grows).
struct IndexTable: Sendable {
    /// An index, or `empty`; the count of slots is a power of two.
    private var slots: [Int32] = []
    private(set) var count = 0
    private static let empty: Int32 = -1

    /// The first index recorded under `hash` whose element `matches`, if any.
    func first(hash: Int, where matches: (Int) -> Bool) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != Self.empty {
            let index = Int(slots[slot])
            if matches(index) { return index }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Records `index` under `hash`.
    mutating func insert(_ index: Int, hash: Int, rehashing hashOf: (Int) -> Int) {
        precondition(index <= Int(Int32.max), "more entries than the table can hold")
        if (count + 1) * 2 > slots.count { grow(to: max(16, slots.count * 2), rehashing: hashOf) }
        place(Int32(index), hash: hash)
        count += 1
    }

    /// Makes room for `total` entries without growing again.
    mutating func reserveCapacity(_ total: Int, rehashing hashOf: (Int) -> Int) {
        var capacity = max(16, slots.count)
        while total * 2 > capacity { capacity *= 2 }
        if capacity > slots.count { grow(to: capacity, rehashing: hashOf) }
    }

    private mutating func grow(to capacity: Int, rehashing hashOf: (Int) -> Int) {
        let old = slots
        slots = Array(repeating: Self.empty, count: capacity)
        for index in old where index != Self.empty { place(index, hash: hashOf(Int(index))) }
    }

    private mutating func place(_ index: Int32, hash: Int) {
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != Self.empty { slot = (slot + 1) & mask }
        slots[slot] = index
    }
}

/// Finds a planned file by its path: an ``IndexTable`` of the files, hashed by path.
///
/// Every method is given the files the indices point into; the caller keeps them the same
/// collection from one call to the next (the bookkeeping's files).
struct FilePathIndex: Sendable {
    private var table = IndexTable()

    var count: Int { table.count }

    /// The index of the file at `path`, if any.
    func index(of path: String, in files: ChunkedArray<PlannedFile>) -> Int? {
        table.first(hash: path.hashValue) { files[$0].path == path }
    }

    /// Records that `files[index]` is at its path, which no recorded file has.
    mutating func insert(_ index: Int, in files: ChunkedArray<PlannedFile>) {
        table.insert(index, hash: files[index].path.hashValue) { files[$0].path.hashValue }
    }

    /// Makes room for `total` files without growing again.
    mutating func reserveCapacity(_ total: Int, in files: ChunkedArray<PlannedFile>) {
        table.reserveCapacity(total) { files[$0].path.hashValue }
    }
}
