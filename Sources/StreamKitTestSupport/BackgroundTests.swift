import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A trait that runs the test cases it applies to on ``BackgroundTestExecutor``'s threads, at a
/// low scheduling priority, instead of on the cooperative pool.
///
/// The pool has one thread per core (two on the build machines), and every test of the process
/// starts at once. Seconds of synchronous work (a property test, a parse of every corpus file)
/// holding both pool threads stall every server the other tests are talking to, whose clients
/// then time out although nothing is wrong. In the background the work gets a tenth of a busy
/// CPU and every idle cycle, and the pool keeps turning.
///
/// ```swift
/// @Suite(.background) struct CorpusTests { ... }
/// ```
public struct BackgroundTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BackgroundTestExecutor.shared) { try await function() }
    }
}

extension Trait where Self == BackgroundTrait {
    /// Runs each test case on the background threads, off the cooperative pool.
    public static var background: Self { BackgroundTrait() }
}

/// A task executor of threads at nice 10 (a tenth of the weight of a normal thread when the
/// CPU is contended), running the jobs given to it in order.
///
/// Its threads live as long as the process: keep an executor of your own in a `static let`.
public final class BackgroundTestExecutor: TaskExecutor, @unchecked Sendable {
    /// The one the ``BackgroundTrait`` uses, of two threads.
    public static let shared = BackgroundTestExecutor(threads: 2)

    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private let condition = NSCondition()

    /// Starts `threads` threads.
    public init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = "background tests \(index + 1)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        #if os(Linux)
        // On Linux the nice value belongs to the thread, and `who` 0 is the calling one.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
