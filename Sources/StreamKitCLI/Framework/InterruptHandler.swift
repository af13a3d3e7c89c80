import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a job that Ctrl-C (SIGINT) cancels instead of killing the process, so the job can leave
/// its files complete and the command can exit with 130.
public enum InterruptHandler {
    /// Runs `body` in a task that SIGINT cancels; the default SIGINT action is restored afterwards.
    ///
    /// - Throws: What `body` throws, or `CancellationError` when it failed after an interrupt
    ///   (whatever error the cancelled work surfaced as).
    public static func run<Result: Sendable>(
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws
        -> Result
    {
        let task = Task { try await body() }
        let interrupted = Interrupted()
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            interrupted.value.store(true, ordering: .releasing)
            task.cancel()
        }
        signal(SIGINT, SIG_IGN)
        source.resume()
        defer {
            source.cancel()
            signal(SIGINT, SIG_DFL)
        }
        return try await withTaskCancellationHandler {
            do {
                return try await task.value
            } catch {
                if interrupted.value.load(ordering: .acquiring) { throw CancellationError() }
                throw error
            }
        } onCancel: {
            task.cancel()
        }
    }

    private final class Interrupted: Sendable {
        let value = Atomic(false)
    }
}
