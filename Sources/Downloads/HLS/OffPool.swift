import Dispatch

/// Runs CPU-heavy synchronous work (parsing a playlist of megabytes) on a Dispatch queue rather
/// than a thread of Swift's cooperative pool, which has as many threads as cores and must keep
/// serving every other task meanwhile.
func offCooperativePool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: work()) }
    }
}

/// A serial executor on a Dispatch queue of its own: an actor that makes blocking calls (SQLite
/// commits and checkpoints that fsync, file deletions) runs them there, never on a thread of the
/// cooperative pool, which has as many threads as cores and must keep serving every other task.
final class DispatchQueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
