/// Finds a planned file by its path: an open-addressing table of indices into the files, the
/// paths themselves being read from the files. A dictionary from path to index took 60 to 80
/// bytes a file (its keys a copy of each path's 16 bytes, its doublings); this takes 4 bytes a
/// slot, at most half of the slots used.
///
/// Every method is given the files the indices point into; the caller keeps them the same
/// collection from one call to the next (the bookkeeping's files).
struct FilePathIndex: Sendable {
    /// An index into the files, or `empty`; the count of slots is a power of two.
    private var slots: [Int32] = []
    private(set) var count = 0
    private static let empty: Int32 = -1

    /// The index of the file at `path`, if any.
    func index(of path: String, in files: ChunkedArray<PlannedFile>) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = path.hashValue & mask
        while slots[slot] != Self.empty {
            let index = Int(slots[slot])
            if files[index].path == path { return index }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Records that `files[index]` is at its path, which no recorded file has.
    mutating func insert(_ index: Int, in files: ChunkedArray<PlannedFile>) {
        precondition(index <= Int(Int32.max), "more files than a package can hold")
        if (count + 1) * 2 > slots.count { grow(to: max(16, slots.count * 2), in: files) }
        place(Int32(index), path: files[index].path)
        count += 1
    }

    /// Makes room for `total` files without growing again.
    mutating func reserveCapacity(_ total: Int, in files: ChunkedArray<PlannedFile>) {
        var capacity = max(16, slots.count)
        while total * 2 > capacity { capacity *= 2 }
        if capacity > slots.count { grow(to: capacity, in: files) }
    }

    private mutating func grow(to capacity: Int, in files: ChunkedArray<PlannedFile>) {
        let old = slots
        slots = Array(repeating: Self.empty, count: capacity)
        for index in old where index != Self.empty { place(index, path: files[Int(index)].path) }
    }

    private mutating func place(_ index: Int32, path: String) {
        let mask = slots.count - 1
        var slot = path.hashValue & mask
        while slots[slot] != Self.empty { slot = (slot + 1) & mask }
        slots[slot] = index
    }
}
