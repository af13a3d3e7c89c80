import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a job that Ctrl-C (SIGINT) cancels instead of killing the process, so the job can leave
/// its files complete and the command can exit with 130.
public enum InterruptHandler {
    /// Runs `body` in a task that SIGINT cancels; the default SIGINT action is restored afterwards.
    public static func run<Result: Sendable>(
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws
        -> Result
    {
        let task = Task { try await body() }
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { task.cancel() }
        signal(SIGINT, SIG_IGN)
        source.resume()
        defer {
            source.cancel()
            signal(SIGINT, SIG_DFL)
        }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}
