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
        lowerThisThreadsPriority()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body` on a thread of its own at nice 10, like the ``BackgroundTrait``, and returns its
/// result with the CPU time the thread spent on it.
///
/// For bounds on how long work takes: on a machine busy with every test at once, the wall time of
/// low-priority work says how busy the machine was, and the CPU time how much work there was.
public func measuredInBackground<T: Sendable>(
    _ body: @escaping @Sendable () throws -> T
) async throws -> (result: T, cpuTime: Duration) {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            lowerThisThreadsPriority()
            let start = threadCPUTime()
            do {
                let result = try body()
                continuation.resume(returning: (result, threadCPUTime() - start))
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}

/// The CPU time the calling thread has spent.
public func threadCPUTime() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}

/// Runs `body` on a thread of its own at nice 10: for load generators and other seconds of work
/// whose speed the test does not assert, so that they take only the CPU nobody else wants.
public func runInBackground<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await measuredInBackground(body).result
}

/// Puts the calling thread at nice 10 (on Linux the nice value belongs to the thread, and `who` 0
/// is the calling one; elsewhere it would be the whole process, so nothing is done).
private func lowerThisThreadsPriority() {
    #if os(Linux)
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    #endif
}
