import Testing

@testable import StreamKitHTTPClient

/// The pool that keeps transfers' large buffers for the next transfer instead of freeing them.
@Suite struct TransferBufferPoolTests {
    @Test func aBufferGivenBackIsTheNextOneTakenOfItsSize() {
        let pool = TransferBufferPool(limitPerSize: 4)
        let first = pool.take(byteCount: 128 << 10)
        #expect(first.count == 128 << 10)
        #expect(Int(bitPattern: first.baseAddress) % 64 == 0)
        pool.give(first)
        #expect(pool.freeCount(byteCount: 128 << 10) == 1)
        // Another size is a buffer of its own; the size given back is the one reused.
        let other = pool.take(byteCount: 256 << 10)
        #expect(other.baseAddress != first.baseAddress)
        let again = pool.take(byteCount: 128 << 10)
        #expect(again.baseAddress == first.baseAddress)
        #expect(pool.freeCount(byteCount: 128 << 10) == 0)
        pool.give(again)
        pool.give(other)
    }

    @Test func thePoolKeepsAtMostItsLimitOfEachSize() {
        let pool = TransferBufferPool(limitPerSize: 2)
        let buffers = (0..<5).map { _ in pool.take(byteCount: 64 << 10) }
        #expect(Set(buffers.map(\.baseAddress)).count == 5)
        for buffer in buffers { pool.give(buffer) }
        #expect(pool.freeCount(byteCount: 64 << 10) == 2)
        // The two kept are the first two given back.
        let taken = [pool.take(byteCount: 64 << 10), pool.take(byteCount: 64 << 10)]
        #expect(Set(taken.map(\.baseAddress)) == Set(buffers.prefix(2).map(\.baseAddress)))
        for buffer in taken { buffer.deallocate() }
    }
}
