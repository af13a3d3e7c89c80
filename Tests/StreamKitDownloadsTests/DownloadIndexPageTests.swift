import Foundation
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

/// The pages serve asks of the index: queue order, or the unfinished tasks first (in queue order)
/// and then the succeeded ones, newest first, with offsets that cross from one to the other.
struct DownloadIndexPageTests {
    /// Tasks 1…12; every third one (3, 6, 9, 12) is not yet done, the rest succeeded.
    static func index() throws -> DownloadIndex {
        let directory = try TestRun.makeTemporaryDirectory("index-pages")
        let index = try DownloadIndex(path: directory.appendingPathComponent("queue.sqlite").path)
        for number in 1...12 {
            var task = DownloadEventStreamTests.task("t\(number)", number % 3 == 0 ? .stopped : .success)
            task.queueID = Int64(number)
            _ = try index.insert(task)
        }
        return index
    }

    @Test func pagesInQueueOrder() throws {
        let index = try Self.index()
        #expect(
            try index.tasks(offset: 0, limit: 5, unfinishedFirst: false).map(\.id) == ["t1", "t2", "t3", "t4", "t5"])
        #expect(try index.tasks(offset: 10, limit: 5, unfinishedFirst: false).map(\.id) == ["t11", "t12"])
        #expect(try index.tasks(offset: 12, limit: 5, unfinishedFirst: false).isEmpty)
        #expect(try index.stateCounts() == [.stopped: 4, .success: 8])
    }

    @Test(arguments: [(0, 3), (0, 12), (2, 4), (4, 3), (6, 10), (11, 5), (12, 1)])
    func pagesTheUnfinishedFirstThenTheNewestFinished(offset: Int, limit: Int) throws {
        let whole = ["t3", "t6", "t9", "t12", "t11", "t10", "t8", "t7", "t5", "t4", "t2", "t1"]
        let expected = Array(whole.dropFirst(offset).prefix(limit))
        #expect(try Self.index().tasks(offset: offset, limit: limit, unfinishedFirst: true).map(\.id) == expected)
    }
}
