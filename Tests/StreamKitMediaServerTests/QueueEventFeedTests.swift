import Foundation
import Synchronization
import Testing

@testable import StreamKitMediaServer

/// The event feed against a queue whose reads the test sets: every listener's stream begins with
/// the snapshot and then holds every change after it, in order; a late listener's snapshot is the
/// latest state; leaving stops the poller; closing ends every stream.
@Suite struct QueueEventFeedTests {
    static func task(_ id: String, _ state: String) -> QueueTaskSummary {
        QueueTaskSummary(
            id: id, title: id, url: "http://example.com/\(id)", kind: "file", state: state, progress: 0, bytesDone: 0,
            bytesExpected: nil, bytesPerSecond: 0, error: nil, playPath: nil)
    }

    /// The events' names and the state each gives task `a` (or `-` when the event leaves it).
    static func next(_ iterator: inout AsyncStream<[UInt8]>.Iterator) async -> String? {
        guard let frame = await iterator.next() else { return nil }
        let text = String(decoding: frame, as: UTF8.self)
        if text.hasPrefix("retry:") { return "retry" }
        let name = text.split(separator: "\n").first.map { String($0.dropFirst("event: ".count)) } ?? ""
        if text.contains(#""left":["a"]"#) { return name + " -" }
        let state = text.components(separatedBy: #""state":""#).dropFirst().first?.prefix { $0 != "\"" } ?? ""
        return name + " " + state
    }

    @Test func snapshotsThenEveryChangeInOrder() async throws {
        let queue = Mutex(QueueTaskPage(tasks: [Self.task("a", "ready")], states: ["ready": 1]))
        let reads = Mutex(0)
        let feed = QueueEventFeed(request: QueueTaskRequest(limit: 10), interval: .milliseconds(20)) { _ in
            reads.withLock { $0 += 1 }
            return queue.withLock { $0 }
        }
        var first = feed.listen().makeAsyncIterator()
        #expect(await Self.next(&first) == "retry")
        #expect(await Self.next(&first) == "snapshot ready")
        queue.withLock { $0 = QueueTaskPage(tasks: [Self.task("a", "running")], states: ["running": 1]) }
        #expect(await Self.next(&first) == "tasks running")
        // A listener that comes now starts from the latest state, then sees what follows.
        var second = feed.listen().makeAsyncIterator()
        #expect(await Self.next(&second) == "retry")
        #expect(await Self.next(&second) == "snapshot running")
        queue.withLock { $0 = QueueTaskPage(tasks: [], states: [:]) }
        #expect(await Self.next(&first) == "tasks -")
        #expect(await Self.next(&second) == "tasks -")
        // Closing ends both streams.
        feed.close()
        #expect(await first.next() == nil)
        #expect(await second.next() == nil)
        // A closed feed reads no more (a read in flight may finish), and a new listener's stream
        // ends at once.
        var settled = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !settled && ContinuousClock.now < deadline {
            let before = reads.withLock { $0 }
            try await Task.sleep(for: .milliseconds(200))
            settled = reads.withLock { $0 } == before
        }
        #expect(settled)
        var late = feed.listen().makeAsyncIterator()
        #expect(await late.next() == nil)
    }

    @Test func thePollerStopsWhenTheLastListenerLeaves() async throws {
        let reads = Mutex(0)
        let feed = QueueEventFeed(request: QueueTaskRequest(limit: 10), interval: .milliseconds(10)) { _ in
            reads.withLock { $0 += 1 }
            return QueueTaskPage(tasks: [], states: [:])
        }
        var listener: AsyncStream<[UInt8]>.Iterator? = feed.listen().makeAsyncIterator()
        _ = await listener?.next()
        // Waits with deadlines, not fixed sleeps: a loaded machine runs the poller late.
        let deadline = ContinuousClock.now + .seconds(20)
        while reads.withLock({ $0 }) <= 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(reads.withLock { $0 } > 2)
        listener = nil
        // Stopped: a read in flight may still finish, then the count stays for 20 intervals.
        var settled = false
        while !settled && ContinuousClock.now < deadline {
            let before = reads.withLock { $0 }
            try await Task.sleep(for: .milliseconds(200))
            settled = reads.withLock { $0 } == before
        }
        #expect(settled, "the poller goes on without listeners")
        feed.close()
    }
}
