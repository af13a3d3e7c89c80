import Foundation
import StreamKitCore
import Synchronization

/// What changed in the part of the queue the page shows between two reads, as a pure value: the
/// tasks that are new or differ, the ids that left it (removed, or pushed past its end), and the
/// counts by state when they changed.
struct QueueFeedDiff: Sendable {
    private(set) var shown: [String: QueueTaskSummary] = [:]
    private(set) var states: [String: Int]?

    struct Change: Sendable, Encodable {
        var tasks: [QueueTaskSummary]
        var left: [String]
        var states: [String: Int]?
        var isEmpty: Bool { tasks.isEmpty && left.isEmpty && states == nil }
    }

    /// Takes a new read; returns what differs from the last one.
    mutating func update(_ page: QueueTaskPage) -> Change {
        var changed: [QueueTaskSummary] = []
        var next: [String: QueueTaskSummary] = [:]
        for task in page.tasks {
            next[task.id] = task
            if shown[task.id] != task { changed.append(task) }
        }
        let left = shown.keys.filter { next[$0] == nil }.sorted()
        let newStates = states == page.states ? nil : page.states
        shown = next
        states = page.states
        return Change(tasks: changed, left: left, states: newStates)
    }
}

/// `GET /api/events`: the queue's changes as Server-Sent Events. One reader polls the queue's
/// index (every ``interval``, only while somebody listens) and sends each listener what changed:
/// the process that runs the queue may be another one, and its index is what they share. A
/// listener gets a `snapshot` event first (the tasks the page shows and the counts by state),
/// then `tasks` events; a comment every 15 s keeps idle connections open.
final class QueueEventFeed: Sendable {
    private struct State {
        var listeners: [Int: AsyncStream<[UInt8]>.Continuation] = [:]
        var nextID = 0
        var diff = QueueFeedDiff()
        /// The last page read, which a new listener's snapshot is made of.
        var lastPage: QueueTaskPage?
        var poller: Task<Void, Never>?
        /// Which poller may change the state: one cancelled while it read must not.
        var generation = 0
        var closed = false
    }

    let read: @Sendable (QueueTaskRequest) throws -> QueueTaskPage
    let request: QueueTaskRequest
    let interval: Duration
    private let state = Mutex(State())

    init(
        request: QueueTaskRequest, interval: Duration = .milliseconds(500),
        read: @escaping @Sendable (QueueTaskRequest) throws -> QueueTaskPage
    ) {
        self.read = read
        self.request = request
        self.interval = interval
    }

    /// The event stream of a new listener: a `retry` hint, then a snapshot, then changes. Ends
    /// when the feed closes, or when the listener falls 64 events behind (a browser reconnects
    /// and gets a new snapshot); the listener leaves when the stream's consumer stops.
    func listen() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(64))
        // The snapshot is the page the poller compares its next read with, sent before the
        // listener can receive a change: no change is lost or comes before it.
        let id: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            if state.poller == nil || state.lastPage == nil, let page = try? read(request) {
                state.diff = QueueFeedDiff()
                _ = state.diff.update(page)
                state.lastPage = page
            }
            continuation.yield(Array("retry: 2000\n\n".utf8))
            if let page = state.lastPage {
                continuation.yield(
                    Self.frame("snapshot", QueueFeedDiff.Change(tasks: page.tasks, left: [], states: page.states)))
            }
            let id = state.nextID
            state.nextID += 1
            state.listeners[id] = continuation
            if state.poller == nil {
                state.generation += 1
                let generation = state.generation
                state.poller = Task { [weak self] in await self?.poll(generation) }
            }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.leave(id) }
        return stream
    }

    /// Ends every listener's stream (the server is stopping).
    func close() {
        let (listeners, poller) = state.withLock { state in
            state.closed = true
            state.generation += 1
            defer {
                state.listeners = [:]
                state.poller = nil
            }
            return (Array(state.listeners.values), state.poller)
        }
        poller?.cancel()
        for listener in listeners { listener.finish() }
    }

    private func leave(_ id: Int) {
        let poller: Task<Void, Never>? = state.withLock { state in
            state.listeners[id] = nil
            guard state.listeners.isEmpty, let poller = state.poller else { return nil }
            state.poller = nil
            state.generation += 1
            state.lastPage = nil
            return poller
        }
        poller?.cancel()
    }

    private func poll(_ generation: Int) async {
        var sinceBeat = Duration.zero
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { return }
            sinceBeat += interval
            // A read that fails (the index being replaced) is tried again at the next turn.
            let page = try? read(request)
            let update = state.withLock { state -> ([UInt8]?, [(Int, AsyncStream<[UInt8]>.Continuation)])? in
                guard state.generation == generation else { return nil }
                guard let page else { return (nil, Array(state.listeners)) }
                let change = state.diff.update(page)
                state.lastPage = page
                return (change.isEmpty ? nil : Self.frame("tasks", change), Array(state.listeners))
            }
            guard let (frame, listeners) = update else { return }
            var payload = frame
            if payload == nil && sinceBeat >= .seconds(15) { payload = Array(": keep-alive\n\n".utf8) }
            guard let payload else { continue }
            sinceBeat = .zero
            for (_, listener) in listeners {
                // A listener 64 events behind has lost changes: its stream ends, and it comes
                // back for a snapshot.
                if case .dropped = listener.yield(payload) { listener.finish() }
            }
        }
    }

    /// One event: `event: NAME` and the JSON on one `data:` line (JSON has no raw newlines).
    static func frame(_ name: String, _ change: QueueFeedDiff.Change) -> [UInt8] {
        var bytes = Array("event: \(name)\ndata: ".utf8)
        bytes += (try? APIJSON.encode(change)) ?? Array("{}".utf8)
        bytes += Array("\n\n".utf8)
        return bytes
    }
}

/// JSON answers of `/api/`: keys sorted, one line.
enum APIJSON {
    static func encode(_ value: some Encodable) throws -> [UInt8] {
        var failure: (any Error)?
        let bytes = JSONWriter.bytes { writer in
            do { try writer.encode(value, options: .init(sortedKeys: true)) } catch { failure = error }
        }
        if let failure { throw failure }
        return bytes
    }
}
