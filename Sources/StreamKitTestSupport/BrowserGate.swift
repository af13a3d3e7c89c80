/// At most one browser at a time in a test run. Each headless Chromium takes a core or more for
/// seconds; several at once on these two cores starved the timing of other tests (a 2 s timeout
/// of an RTMP test fired 4 s late, an nginx log line was not awaited in time).
public actor BrowserGate {
    public static let shared = BrowserGate()

    private var isBusy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once no other browser runs.
    public static func run<Result: Sendable>(
        _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }

    private func acquire() async {
        guard isBusy else {
            isBusy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { isBusy = false } else { waiting.removeFirst().resume() }
    }
}
