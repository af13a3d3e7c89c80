import StreamKitCore
import Testing

@testable import StreamKitDownloads

/// The manager's task table keeps its two orders as tasks come, change state and go: after any
/// sequence of changes they are what sorting every task would give.
struct DownloadTaskTableTests {
    /// The orders the table must hold, computed the slow way from a plain dictionary.
    static func expected(_ model: [String: DownloadTaskInfo]) -> (all: [String], active: [DownloadScheduler.Entry]) {
        let sorted = model.values.sorted { ($0.queueID, $0.id) < ($1.queueID, $1.id) }
        return (
            sorted.map(\.id),
            sorted.filter { DownloadTaskTable.isActive($0.state) }.map { .init(id: $0.id, state: $0.state) }
        )
    }

    /// Three thousand random changes over sixty tasks (adds at the end and in the middle, state
    /// changes, a task given a new place, removals), checked against the model after each. (Ten
    /// thousand over three hundred held a test thread for 19 s in a debug build, long enough to
    /// starve the suite's timed tests.)
    @Test func ordersMatchSortingAfterEveryChange() {
        var generator = SplitMix64(seed: 0x5eed)
        var table = DownloadTaskTable()
        var model: [String: DownloadTaskInfo] = [:]
        var nextQueueID: Int64 = 1
        for step in 0..<3_000 {
            let id = "t\(generator.next() % 60)"
            var info = model[id] ?? DownloadSchedulerTests.info(id)
            switch generator.next() % 10 {
            case 0:
                table[id] = nil
                model[id] = nil
            case 1:
                // A place among the others (a task restored by a repair keeps its old number).
                info.queueID = Int64(generator.next() % UInt64(nextQueueID))
                table[id] = info
                model[id] = info
            default:
                if model[id] == nil {
                    info.queueID = nextQueueID
                    nextQueueID += 1
                }
                info.state = DownloadState.allCases[Int(generator.next() % UInt64(DownloadState.allCases.count))]
                table[id] = info
                model[id] = info
            }
            let (all, active) = Self.expected(model)
            #expect(table.inQueueOrder.map(\.id) == all, "step \(step)")
            #expect(Array(table.schedulerQueue) == active, "step \(step)")
            #expect(table.activeInQueueOrder.map(\.id) == active.map(\.id), "step \(step)")
            #expect(table.inQueueOrder.count == model.count)
            if table.inQueueOrder.map(\.id) != all { return }
        }
    }

    /// The scheduler's answers over the active tasks alone are its answers over every task.
    @Test func theSchedulerAnswersAlikeWithoutTheInactiveTasks() {
        let every = DownloadSchedulerTests.queue(
            "a:success b:running c:stopped d:ready e:failed f:ready g:waiting h:removing i:ready j:stopping k:preparing"
        )
        var table = DownloadTaskTable()
        for (position, entry) in every.enumerated() {
            var info = DownloadSchedulerTests.info(entry.id)
            info.queueID = Int64(position)
            info.state = entry.state
            table[entry.id] = info
        }
        let active = Array(table.schedulerQueue)
        #expect(active.map(\.id) == ["b", "d", "f", "g", "i", "j", "k"])
        for limit in 1...4 {
            let scheduler = DownloadScheduler(maximumConcurrent: limit, autoStart: true)
            #expect(
                scheduler.tasksToStart(queue: active, running: ["b"])
                    == scheduler.tasksToStart(queue: every, running: ["b"]))
            #expect(scheduler.tasksOverLimit(queue: active) == scheduler.tasksOverLimit(queue: every))
        }
        #expect(
            DownloadScheduler.isIdle(queue: active, hasRunners: false)
                == DownloadScheduler.isIdle(queue: every, hasRunners: false))
        #expect(
            DownloadScheduler.hasDrained(queue: active, hasRunners: false, ranSinceIdle: true)
                == DownloadScheduler.hasDrained(queue: every, hasRunners: false, ranSinceIdle: true))
    }
}
