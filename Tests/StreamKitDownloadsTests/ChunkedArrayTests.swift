import StreamKitCore
import Testing

@testable import StreamKitDownloads

/// ``ChunkedArray`` against `Array`: the same operations give the same elements, across chunk
/// boundaries and with copies alive.
struct ChunkedArrayTests {
    static let size = ChunkedArray<Int>.chunkCapacity

    @Test(arguments: [0, 1, size - 1, size, size + 1, 3 * size + 7])
    func appendsReadAndWriteLikeAnArray(count: Int) {
        var chunked = ChunkedArray<Int>()
        var array: [Int] = []
        for value in 0..<count {
            chunked.append(value)
            array.append(value)
        }
        #expect(chunked.count == count)
        #expect(Array(chunked) == array)
        for index in stride(from: 0, to: count, by: 97) {
            chunked[index] = -index
            array[index] = -index
        }
        #expect(Array(chunked) == array)
        #expect(chunked == ChunkedArray(array))
        #expect(Array(chunked[(count / 3)..<(count / 2)]) == Array(array[(count / 3)..<(count / 2)]))
    }

    @Test(arguments: [0, 1, size - 1, size, size + 1, 2 * size, 2 * size + 5])
    func truncatesToAnyCount(newCount: Int) {
        let values = Array(0..<(2 * Self.size + 5))
        var chunked = ChunkedArray(values)
        chunked.truncate(to: newCount)
        #expect(chunked.count == newCount)
        #expect(Array(chunked) == Array(values.prefix(newCount)))
        // Appending after a cut fills the cut chunk before starting a new one.
        chunked.append(contentsOf: 0..<(Self.size + 3))
        #expect(Array(chunked) == Array(values.prefix(newCount)) + Array(0..<(Self.size + 3)))
    }

    @Test func aCopyKeepsItsElementsWhileTheOriginalGrowsAndChanges() {
        var chunked = ChunkedArray(0..<(Self.size + 10))
        let copy = chunked
        let slice = chunked[..<5]
        chunked.append(contentsOf: 0..<Self.size)
        chunked[0] = -1
        chunked[Self.size + 5] = -2
        #expect(Array(copy) == Array(0..<(Self.size + 10)))
        #expect(Array(slice) == [0, 1, 2, 3, 4])
        #expect(chunked.count == 2 * Self.size + 10)
        #expect(chunked[0] == -1 && chunked[Self.size + 5] == -2)
    }

    @Test func anEmptyArrayTakesAnotherWhole() {
        var empty = ChunkedArray<Int>()
        empty += ChunkedArray(0..<3)
        #expect(Array(empty) == [0, 1, 2])
        empty += ChunkedArray(3..<5)
        #expect(Array(empty) == [0, 1, 2, 3, 4])
    }

    @Test func randomOperationsMatchAnArray() {
        var random = SplitMix64(seed: 2026)
        var chunked = ChunkedArray<Int>()
        var array: [Int] = []
        for step in 0..<2_000 {
            switch random.next() % 4 {
            case 0, 1:
                let count = Int(random.next() % 700)
                chunked.append(contentsOf: step..<(step + count))
                array.append(contentsOf: step..<(step + count))
            case 2 where !array.isEmpty:
                let index = Int(random.next() % UInt64(array.count))
                chunked[index] = step
                array[index] = step
            default:
                let newCount = array.isEmpty ? 0 : Int(random.next() % UInt64(array.count + 1))
                chunked.truncate(to: newCount)
                array.removeSubrange(newCount...)
            }
            #expect(chunked.count == array.count)
        }
        #expect(Array(chunked) == array)
    }
}
