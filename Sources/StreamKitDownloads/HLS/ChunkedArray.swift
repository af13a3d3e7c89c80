/// An array kept in chunks of at most ``chunkCapacity`` elements: what a download or a live
/// recording holds per segment and per file, which grows by appending for as long as it runs.
///
/// With one contiguous buffer, each doubling held the old and the new buffer at once, and an
/// append while any copy of the array was alive (a growing playlist composed outside the lock, a
/// checkpoint) copied every element. Here an append allocates at most one chunk, a copy shares the
/// chunks, and a write to a shared array copies only the chunk it touches.
struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    /// Elements a chunk holds at most; every chunk but the last is full.
    static var chunkCapacity: Int { 1024 }

    private var chunks: [[Element]] = []
    private(set) var count = 0

    init() {}

    init(_ elements: some Sequence<Element>) {
        append(contentsOf: elements)
    }

    init(arrayLiteral elements: Element...) {
        self.init(elements)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            return chunks[position / Self.chunkCapacity][position % Self.chunkCapacity]
        }
        _modify {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            yield &chunks[position / Self.chunkCapacity][position % Self.chunkCapacity]
        }
    }

    mutating func append(_ element: Element) {
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkCapacity { chunks.append([]) }
        let last = chunks.count - 1
        // The first chunk grows as an array does, so that a short download stays small. Past half
        // of it, and for every later chunk, the room is made full size at once: an append to a
        // chunk that a copy still shares would otherwise copy it into a buffer twice as large.
        if last > 0 || chunks[last].count >= Self.chunkCapacity / 2 {
            chunks[last].reserveCapacity(Self.chunkCapacity)
        }
        chunks[last].append(element)
        count += 1
    }

    mutating func append(contentsOf elements: some Sequence<Element>) {
        for element in elements { append(element) }
    }

    static func += (array: inout ChunkedArray, elements: some Sequence<Element>) {
        array.append(contentsOf: elements)
    }

    /// Appends `other`; an empty array takes its chunks as they are, without copying.
    static func += (array: inout ChunkedArray, other: ChunkedArray) {
        if array.isEmpty {
            array = other
        } else {
            array.append(contentsOf: other)
        }
    }

    /// Keeps the first `newCount` elements.
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0, "ChunkedArray count below zero")
        guard newCount < count else { return }
        let fullChunks = newCount / Self.chunkCapacity
        let remainder = newCount % Self.chunkCapacity
        chunks.removeSubrange((remainder == 0 ? fullChunks : fullChunks + 1)...)
        if remainder > 0 { chunks[fullChunks].removeSubrange(remainder...) }
        count = newCount
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}

extension ChunkedArray: Equatable where Element: Equatable {
    static func == (lhs: ChunkedArray, rhs: ChunkedArray) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}
