import Foundation
import Testing

/// A trait that runs each test case it applies to on a thread of its own instead of the
/// cooperative pool.
///
/// The pool has one thread per core (two on the build machines), and every test of the process
/// starts at once. Seconds of synchronous work (a property test, a parse of every corpus file,
/// a debug build making megabytes of test data) holding both threads stall every server the
/// other tests are talking to: their clients then time out although nothing is wrong. On a
/// thread of its own the work is shared out by the kernel's scheduler instead, and the pool
/// keeps turning.
///
/// ```swift
/// @Suite(.ownThread) struct CorpusTests { ... }
/// ```
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = ThreadTaskExecutor(name: "test: \(test.name)")
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test case on a thread of its own, off the cooperative pool.
    public static var ownThread: Self { OwnThreadTrait() }
}

/// A task executor with one thread of its own, running the jobs given to it in order.
///
/// Once ``finish()`` is called the thread ends when its queue is empty, and jobs that still
/// arrive (a task that outlived the scope, with this executor as its preference) go to the
/// global concurrent executor.
public final class ThreadTaskExecutor: TaskExecutor, @unchecked Sendable {
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var finished = false
    private let condition = NSCondition()

    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if finished {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once it has run what it was given.
    public func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
