import Synchronization

/// A first-in first-out queue that several workers take from, waiting while it is empty until
/// more is added or it is finished. A waiting worker whose task is cancelled gets `nil`.
final class WorkQueue<Item: Sendable>: Sendable {
    private struct State: ~Copyable {
        var items: [Item] = []
        var head = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Item?, Never>)] = []
        var finished = false
        var nextWaiterID = 0

        mutating func take() -> Item? {
            guard head < items.count else { return nil }
            let item = items[head]
            head += 1
            if head > 1024 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }

    private let state = Mutex(State())

    init() {}

    /// Items added and not yet taken.
    var pendingCount: Int { state.withLock { $0.items.count - $0.head } }

    /// Whether the queue is finished and every item taken: ``next()`` returns `nil` at once.
    var isExhausted: Bool { state.withLock { $0.finished && $0.head == $0.items.count } }

    /// Adds items at the end (ignored once finished).
    func enqueue(_ newItems: [Item]) {
        let handOver = state.withLock { state -> [(CheckedContinuation<Item?, Never>, Item)] in
            guard !state.finished else { return [] }
            if state.head == state.items.count {
                // Empty: the new items' buffer is taken as it is (a long download's first
                // enqueue would otherwise hold its every item twice).
                state.items = newItems
                state.head = 0
            } else {
                state.items.append(contentsOf: newItems)
            }
            var handOver: [(CheckedContinuation<Item?, Never>, Item)] = []
            while !state.waiters.isEmpty, let item = state.take() {
                handOver.append((state.waiters.removeFirst().continuation, item))
            }
            return handOver
        }
        for (continuation, item) in handOver { continuation.resume(returning: item) }
    }

    /// The next item; `nil` once the queue is finished and empty, or when the task is cancelled.
    func next() async -> Item? {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                let immediate = state.withLock { state -> Item?? in
                    if let item = state.take() { return .some(item) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Item?, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
    }

    /// No more items will be added: waiting workers get `nil` once the queue is empty. With
    /// `dropPending`, items not yet taken are removed and returned.
    @discardableResult
    func finish(dropPending: Bool) -> [Item] {
        let (waiters, dropped) = state.withLock { state in
            state.finished = true
            var dropped: [Item] = []
            if dropPending {
                dropped = Array(state.items[state.head...])
                state.items = []
                state.head = 0
            }
            // Workers wait only while the queue is empty, so every waiter can be let go.
            let waiters = state.waiters.map(\.continuation)
            state.waiters = []
            return (waiters, dropped)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        return dropped
    }
}
