/// Runs a job that Ctrl-C (SIGINT), SIGTERM or SIGHUP cancels instead of killing the process, so the job can
/// leave its files complete and the command can exit with 130. Built on ``InterruptMonitor``.
public enum InterruptHandler {
    /// Runs `body` in a task that an interrupt cancels; the default signal actions are restored afterwards.
    ///
    /// - Throws: What `body` throws, or `CancellationError` when it failed after an interrupt
    ///   (whatever error the cancelled work surfaced as).
    public static func run<Result: Sendable>(
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let task = Task { try await body() }
        let monitor = InterruptMonitor { task.cancel() }
        defer { monitor.stop() }
        return try await withTaskCancellationHandler {
            do {
                return try await task.value
            } catch {
                if monitor.wasInterrupted { throw CancellationError() }
                throw error
            }
        } onCancel: {
            task.cancel()
        }
    }
}
