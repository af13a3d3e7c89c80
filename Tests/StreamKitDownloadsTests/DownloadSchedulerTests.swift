import Foundation
import Synchronization
import Testing

@testable import StreamKitDownloads

/// The scheduler and the event hub: pure values and streams, no sockets or files.
struct DownloadSchedulerTests {
    /// `a:ready b:running` → entries in that order.
    static func queue(_ text: String) -> [DownloadScheduler.Entry] {
        text.split(separator: " ").map { word in
            let parts = word.split(separator: ":")
            return DownloadScheduler.Entry(id: String(parts[0]), state: DownloadState(rawValue: String(parts[1]))!)
        }
    }

    static func ids(_ text: String) -> Set<String> { Set(text.split(separator: " ").map(String.init)) }

    /// Ready tasks start in queue order into the free slots; a task with a runner holds its slot
    /// (even when it is back in `ready` while its runner ends); skipped ones are passed over.
    @Test(arguments: [
        (1, "a:ready b:ready", "", "", ["a"]),
        (2, "a:ready b:ready c:ready", "", "", ["a", "b"]),
        (2, "a:running b:ready c:ready", "a", "", ["b"]),
        (2, "a:running b:running c:ready", "a b", "", []),
        (3, "a:stopped b:ready c:failed d:ready e:success", "", "", ["b", "d"]),
        (2, "a:ready b:ready c:ready", "", "a", ["b", "c"]),
        (2, "a:ready b:ready", "a", "", ["b"]),
        (1, "a:running b:running c:ready", "a b", "", []),
        (4, "a:preparing b:stopping c:removing d:ready", "b", "", ["d"]),
        (16, "", "", "", []),
    ])
    func tasksToStart(limit: Int, queue: String, running: String, skipping: String, expected: [String]) {
        let scheduler = DownloadScheduler(maximumConcurrent: limit, autoStart: false)
        let started = scheduler.tasksToStart(
            queue: Self.queue(queue), running: Self.ids(running), skipping: Self.ids(skipping))
        #expect(started == expected)
    }

    /// Lowering the limit sends the latest running tasks in queue order back.
    @Test(arguments: [
        (1, "a:running b:ready c:running d:running", ["c", "d"]),
        (2, "a:running b:running", []),
        (3, "a:running b:running", []),
        (1, "a:ready b:stopped", []),
    ])
    func tasksOverLimit(limit: Int, queue: String, expected: [String]) {
        let scheduler = DownloadScheduler(maximumConcurrent: limit, autoStart: false)
        #expect(scheduler.tasksOverLimit(queue: Self.queue(queue)) == expected)
    }

    /// A new task is queued when the call asks for it, else when the manager's setting does.
    @Test(arguments: [
        (false, Bool?.none, DownloadState.stopped), (true, nil, .ready), (false, true, .ready), (true, false, .stopped),
        (true, true, .ready), (false, false, .stopped),
    ])
    func addedTaskState(setting: Bool, requested: Bool?, expected: DownloadState) {
        let scheduler = DownloadScheduler(maximumConcurrent: 1, autoStart: setting)
        #expect(scheduler.stateForAddedTask(autoStart: requested) == expected)
    }

    /// Idle: no runner and nothing preparing, queued, running or stopping.
    @Test(arguments: [
        ("", false, true), ("a:stopped b:success c:failed", false, true), ("a:stopped", true, false),
        ("a:preparing", false, false), ("a:ready", false, false), ("a:running", false, false),
        ("a:stopping", false, false), ("a:removing", false, true),
    ])
    func isIdle(queue: String, hasRunners: Bool, expected: Bool) {
        #expect(DownloadScheduler.isIdle(queue: Self.queue(queue), hasRunners: hasRunners) == expected)
    }

    /// `allCompleted` is due once a task ran, no runner is left, and nothing is ready or running.
    @Test(arguments: [
        ("a:success", false, true, true), ("a:success", false, false, false), ("a:success", true, true, false),
        ("a:failed b:ready", false, true, false), ("a:failed b:running", false, true, false),
        ("a:failed b:stopped c:stopping", false, true, true),
    ])
    func hasDrained(queue: String, hasRunners: Bool, ranSinceIdle: Bool, expected: Bool) {
        let drained = DownloadScheduler.hasDrained(
            queue: Self.queue(queue), hasRunners: hasRunners, ranSinceIdle: ranSinceIdle)
        #expect(drained == expected)
    }

    // MARK: Event hub

    /// Every subscriber gets the events it asked for, in order; the closures get theirs; a
    /// closed hub ends every stream and hands later subscribers an ended one.
    @Test func hubDeliversFiltersAndCloses() async {
        let hub = DownloadEventHub()
        let all = hub.subscribe(filter: nil)
        let one = hub.subscribe(filter: "a")
        let called = Mutex<[String]>([])
        hub.setCallbacks(
            DownloadCallbacks(
                allCompleted: { called.withLock { $0.append("all") } },
                taskFailed: { info, _ in called.withLock { $0.append("failed \(info.id)") } }))
        hub.setCallbacks(
            DownloadTaskCallbacks(speedChanged: { info in called.withLock { $0.append("speed \(info.id)") } }), for: "a"
        )
        let a = Self.info("a")
        let events: [DownloadEvent] = [
            .added(a), .speed(id: "a", bytesPerSecond: 1), .speed(id: "b", bytesPerSecond: 2), .removed(id: "b"),
            .failed(a, DownloadManagerError(.transfer, "x")), .allCompleted,
        ]
        for event in events { hub.emit(event, task: event.taskID == "a" ? a : nil) }
        hub.setCallbacks(nil, for: "a")
        hub.emit(.speed(id: "a", bytesPerSecond: 3), task: a)
        hub.close()
        var received: [DownloadEvent] = []
        for await event in all { received.append(event) }
        #expect(received == events + [.speed(id: "a", bytesPerSecond: 3)])
        var filtered: [DownloadEvent] = []
        for await event in one { filtered.append(event) }
        #expect(filtered == [events[0], events[1], events[4], .speed(id: "a", bytesPerSecond: 3)])
        #expect(called.withLock { $0 } == ["speed a", "failed a", "all"])
        var late: [DownloadEvent] = []
        for await event in hub.subscribe(filter: nil) { late.append(event) }
        #expect(late.isEmpty)
    }

    static func info(_ id: String) -> DownloadTaskInfo {
        DownloadTaskInfo(
            id: id, queueID: 1, url: "http://127.0.0.1/\(id)", kind: .file, selection: nil, decrypt: true,
            fileType: .video, title: id, thumbnailURL: nil, state: .running, progress: 0, bytesDone: 0,
            bytesExpected: nil, bytesPerSecond: 0, postProcessingProgress: 0, lastError: nil,
            createdAt: Date(timeIntervalSince1970: 0), finishedAt: nil, location: "/tmp/\(id)", connections: 1,
            headers: [])
    }
}
