import Foundation
import StreamKitCore
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

/// No state change is lost to whoever listens: streams open with the tasks as they are, a
/// reopened queue waits for its first listener, callbacks attach at `add`, and `close()` reports
/// what it puts back.
@Suite(.serialized, .requires(.nginx)) struct DownloadEventTests {
    /// Two tasks running at 64 KiB/s; `close()` puts both back `ready` and says so. The manager
    /// opened next starts neither until it has a listener, whose stream begins with both tasks
    /// as they are (`current`, in queue order), then sees both go `ready>running`.
    @Test func aReopenedQueueWaitsForItsFirstListenerWhoSeesEveryChange() async throws {
        let origin = try await StaticOrigin.start(files: ["a.mp4": 1 << 20, "b.mp4": 1 << 20], limitRate: 64 << 10)
        let directory = try TestRun.makeTemporaryDirectory("events-home")
        let first = try await ManagerSupport.manager(directory: directory)
        try await first.setMaximumConcurrentDownloads(2)
        let recorder = EventRecorder(await first.events())
        let a = try await first.add(DownloadRequest(url: origin.url("a.mp4"), kind: .file), autoStart: true)
        let b = try await first.add(DownloadRequest(url: origin.url("b.mp4"), kind: .file), autoStart: true)
        try await recorder.wait(for: a.id, .running)
        try await recorder.wait(for: b.id, .running)
        await first.close()
        try await recorder.wait { events in
            [a.id, b.id].allSatisfy { id in
                events.contains {
                    if case .stateChanged(let info, .running) = $0 {
                        info.id == id && info.state == .ready
                    } else {
                        false
                    }
                }
            }
        }

        let second = try await ManagerSupport.manager(directory: directory)
        try await Task.sleep(for: .milliseconds(300))
        #expect(await second.allTasks().map(\.state) == [.ready, .ready], "nothing starts before a listener")
        let events = EventRecorder(await second.events())
        try await events.wait(for: a.id, .running)
        try await events.wait(for: b.id, .running)
        let seen = events.all
        let current = seen.prefix(2).compactMap { event -> String? in
            if case .current(let info) = event { "\(info.id):\(info.state)" } else { nil }
        }
        #expect(current == ["\(a.id):ready", "\(b.id):ready"], "\(seen)")
        #expect(events.milestones.filter { $0 == "ready>running" }.count == 2, "\(events.milestones)")
        await second.close()
        await origin.stop()
    }

    /// Callbacks given to `add` see the task's first state change and every later one.
    @Test func callbacksGivenToAddSeeEveryStateChange() async throws {
        let origin = try await StaticOrigin.start(files: ["a.mp4": 200_000])
        let manager = try await ManagerSupport.manager()
        let states = Mutex<[DownloadState]>([])
        let info = try await manager.add(
            DownloadRequest(url: origin.url("a.mp4"), kind: .file), autoStart: true,
            callbacks: DownloadTaskCallbacks(stateChanged: { info in states.withLock { $0.append(info.state) } }))
        let deadline = ContinuousClock.now + .seconds(30)
        while await manager.info(info.id)?.state != .success, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(states.withLock { $0 } == [.ready, .running, .success])
        await manager.close()
        await origin.stop()
    }

    /// A stream of one task opens with that task as it is.
    @Test func updatesOfOneTaskBeginWithIt() async throws {
        let origin = try await StaticOrigin.start(files: ["a.mp4": 100_000])
        let manager = try await ManagerSupport.manager()
        let info = try await manager.add(DownloadRequest(url: origin.url("a.mp4"), kind: .file), autoStart: false)
        var iterator = await manager.updates(for: info.id).makeAsyncIterator()
        let first = await iterator.next()
        #expect(first == .current(info), "\(String(describing: first))")
        await manager.close()
        await origin.stop()
    }
}
