import Synchronization

/// The large buffers of transfers (a plain transfer's receive buffer, the staging of direct
/// writes), kept for the next transfer when one ends instead of freed.
///
/// glibc serves a block of 128 KiB or more by `mmap` at first; once such a block is freed it
/// raises that threshold, and the buffers of every later transfer come from the heap. There a
/// buffer alive during a transfer is surrounded by the long-lived allocations made meanwhile
/// (a recording's segments and files), and its hole, split by smaller allocations after it is
/// freed, no longer takes the next buffer: a day's live recording ended at 2-4 times its first
/// RSS. Buffers that are never freed leave no holes, and the next transfer finds its pages
/// already mapped.
public final class TransferBufferPool: Sendable {
    /// The pool of the process's transfers.
    public static let shared = TransferBufferPool(limitPerSize: 32)

    /// Free buffers kept of each size at most: about the transfers that run at once.
    public let limitPerSize: Int
    /// Addresses of free buffers by size (addresses, not pointers: what a lock guards is sent
    /// between threads).
    private let free = Mutex<[Int: [UInt]]>([:])

    public init(limitPerSize: Int) {
        self.limitPerSize = limitPerSize
    }

    /// A buffer of `byteCount` bytes, aligned to 64, with undefined contents.
    public func take(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        let reused = free.withLock { free in free[byteCount]?.popLast() }
        let start =
            reused.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
            ?? UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        return UnsafeMutableRawBufferPointer(start: start, count: byteCount)
    }

    /// Gives back a buffer ``take(byteCount:)`` gave: kept for the next transfer, or freed when
    /// the pool holds ``limitPerSize`` of its size already.
    public func give(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress else { return }
        let address = UInt(bitPattern: start)
        let kept = free.withLock { free in
            guard free[buffer.count, default: []].count < limitPerSize else { return false }
            free[buffer.count, default: []].append(address)
            return true
        }
        if !kept { start.deallocate() }
    }

    /// Buffers of `byteCount` bytes held free.
    public func freeCount(byteCount: Int) -> Int {
        free.withLock { $0[byteCount]?.count ?? 0 }
    }
}
