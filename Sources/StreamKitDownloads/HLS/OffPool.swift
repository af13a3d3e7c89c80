import Dispatch

/// Runs CPU-heavy synchronous work (parsing a playlist of megabytes) on a Dispatch queue rather
/// than a thread of Swift's cooperative pool, which has as many threads as cores and must keep
/// serving every other task meanwhile.
func offCooperativePool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: work()) }
    }
}
