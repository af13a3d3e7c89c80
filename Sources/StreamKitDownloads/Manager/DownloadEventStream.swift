import Synchronization

/// One subscriber's events of a ``DownloadManager``, in the order they happened, with a bound a
/// slow reader cannot break: state changes and every other event are kept (there are only so many
/// of them), while progress and speed keep only the newest value of each task not yet read (since
/// the task's last other event, which they never pass); a reader that falls behind sees each
/// task's latest figures, never a backlog of old ones.
///
/// Ends when the manager closes. One reader at a time.
public struct DownloadEventStream: AsyncSequence, Sendable {
    public typealias Element = DownloadEvent

    let buffer: DownloadEventBuffer

    public struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: DownloadEventBuffer

        public mutating func next() async -> DownloadEvent? { await buffer.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer) }
}

/// The events a subscriber has not read yet, coalescing progress and speed per task.
final class DownloadEventBuffer: Sendable {
    /// Which events replace an unread one of the same kind and task.
    private enum Slot: Hashable {
        case progress(String)
        case speed(String)

        init?(_ event: DownloadEvent) {
            switch event {
            case .progress(let info): self = .progress(info.id)
            case .speed(let id, _): self = .speed(id)
            default: return nil
            }
        }
    }

    private struct State {
        var events: [DownloadEvent] = []
        /// The first unread event in `events`.
        var start = 0
        /// Where each slot's unread event is in `events`.
        var slots: [Slot: Int] = [:]
        var reader: CheckedContinuation<DownloadEvent?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// The events waiting to be read (for tests).
    var pending: Int { state.withLock { $0.events.count - $0.start } }

    /// Adds `event` (or hands it to a waiting reader); nothing after ``finish()``.
    func yield(_ event: DownloadEvent) {
        let reader = state.withLock { state -> CheckedContinuation<DownloadEvent?, Never>? in
            guard !state.finished else { return nil }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            let slot = Slot(event)
            if let slot, let index = state.slots[slot] {
                state.events[index] = event
            } else {
                state.events.append(event)
                if let slot {
                    state.slots[slot] = state.events.count - 1
                } else if let id = event.taskID {
                    // Figures after a change of the task come after it: they start new slots.
                    state.slots[.progress(id)] = nil
                    state.slots[.speed(id)] = nil
                }
            }
            return nil
        }
        reader?.resume(returning: event)
    }

    /// Ends the stream once the unread events are read.
    func finish() {
        let reader = state.withLock { state in
            state.finished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    /// The next event, waiting for one; `nil` once finished and read, or when the reading task
    /// is cancelled.
    func next() async -> DownloadEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> DownloadEvent?? in
                    if let event = Self.pop(&state) { return .some(event) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.reader = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let reader = state.withLock { state in
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: nil)
        }
    }

    private static func pop(_ state: inout State) -> DownloadEvent? {
        guard state.start < state.events.count else { return nil }
        let event = state.events[state.start]
        if let slot = Slot(event), state.slots[slot] == state.start { state.slots[slot] = nil }
        state.start += 1
        if state.start == state.events.count {
            state.events.removeAll(keepingCapacity: state.events.count <= 64)
            state.start = 0
        } else if state.start >= 64 && state.start * 2 >= state.events.count {
            let dropped = state.start
            state.events.removeFirst(dropped)
            state.start = 0
            state.slots = state.slots.mapValues { $0 - dropped }
        }
        return event
    }
}
