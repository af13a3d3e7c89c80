/// Which tasks of a ``DownloadManager`` run: ready tasks start in queue order, at most
/// ``maximumConcurrent`` at once; a new task is queued at once when auto-start says so. A pure
/// value: the manager asks it, then starts, stops and saves.
struct DownloadScheduler: Hashable, Sendable {
    /// One task as the scheduler sees it.
    struct Entry: Hashable, Sendable {
        var id: String
        var state: DownloadState
    }

    /// Tasks running at once.
    var maximumConcurrent: Int
    /// The manager's ``DownloadManager/autoStart``.
    var autoStart: Bool

    /// The state a new task moves to once prepared: `ready` when `requested` (else the manager's
    /// setting) starts it, else `stopped`, waiting for a start.
    func stateForAddedTask(autoStart requested: Bool?) -> DownloadState {
        requested ?? autoStart ? .ready : .stopped
    }

    /// The ready tasks to start now, in queue order, as many as slots are free.
    ///
    /// - Parameters:
    ///   - queue: The tasks in queue order (those in a stopped or final state may be left out).
    ///   - running: The tasks that have a runner (each holds a slot until its runner ends).
    ///   - skipping: Tasks that could not be started just now, passed over.
    /// - Returns: The ids to start, in order.
    func tasksToStart(queue: some Sequence<Entry>, running: Set<String>, skipping: Set<String> = []) -> [String] {
        let free = maximumConcurrent - running.count
        guard free > 0 else { return [] }
        let candidates = queue.lazy.filter {
            $0.state == .ready && !running.contains($0.id) && !skipping.contains($0.id)
        }
        return Array(candidates.prefix(free).map(\.id))
    }

    /// The running tasks beyond the limit, the latest in queue order, which go back to `ready`.
    func tasksOverLimit(queue: some Sequence<Entry>) -> [String] {
        Array(queue.filter { $0.state == .running }.dropFirst(maximumConcurrent).map(\.id))
    }

    /// Whether nothing is being added, queued, running or stopping.
    static func isIdle(queue: some Sequence<Entry>, hasRunners: Bool) -> Bool {
        !hasRunners && !queue.contains { [.preparing, .ready, .running, .waiting, .stopping].contains($0.state) }
    }

    /// Whether `allCompleted` is due after a task ended: a task ran since the last one, no runner
    /// is left, and no task is ready, running or waiting for its host.
    static func hasDrained(queue: some Sequence<Entry>, hasRunners: Bool, ranSinceIdle: Bool) -> Bool {
        ranSinceIdle && !hasRunners && !queue.contains { [.ready, .running, .waiting].contains($0.state) }
    }
}
