import Synchronization

/// Hands a ``DownloadManager``'s events to its subscribers' streams and to the callbacks. The
/// manager emits from its actor, so events keep their order; a stream that ends unsubscribes
/// itself here, with no hop to the actor.
final class DownloadEventHub: Sendable {
    private struct Subscriber {
        var filter: String?
        var continuation: AsyncStream<DownloadEvent>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextKey = 0
        var closed = false
        var callbacks = DownloadCallbacks()
        var taskCallbacks: [String: DownloadTaskCallbacks] = [:]
    }

    private let state = Mutex(State())

    /// A stream of every event (`filter` `nil`) or of one task's, until ``close()``, starting
    /// with `current` (the tasks as they are).
    func subscribe(filter: String?, current: [DownloadEvent] = []) -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloadEvent.self)
        let key: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            for event in current { continuation.yield(event) }
            let key = state.nextKey
            state.nextKey += 1
            state.subscribers[key] = Subscriber(filter: filter, continuation: continuation)
            return key
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Sets the manager-wide closures.
    func setCallbacks(_ callbacks: DownloadCallbacks) { state.withLock { $0.callbacks = callbacks } }

    /// Sets one task's closures; `nil` removes them.
    func setCallbacks(_ callbacks: DownloadTaskCallbacks?, for id: String) {
        state.withLock { $0.taskCallbacks[id] = callbacks }
    }

    /// Sends `event` to the subscribers it concerns, then calls the closures it concerns.
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - task: The task as it is now, handed to the closures of events that carry only an id
    ///     (speed, post-processing); those closures are not called without it.
    func emit(_ event: DownloadEvent, task: DownloadTaskInfo?) {
        let (streams, callbacks, taskCallbacks) = state.withLock { state in
            let streams = state.subscribers.values.filter { $0.filter == nil || $0.filter == event.taskID }
            return (streams.map(\.continuation), state.callbacks, event.taskID.flatMap { state.taskCallbacks[$0] })
        }
        for continuation in streams { continuation.yield(event) }
        switch event {
        case .allCompleted: callbacks.allCompleted?()
        case .completed(let info): callbacks.taskCompleted?(info)
        case .failed(let info, let error): callbacks.taskFailed?(info, error)
        case .stateChanged(let info, _): taskCallbacks?.stateChanged?(info)
        case .progress(let info): taskCallbacks?.progressChanged?(info)
        case .speed: if let task { taskCallbacks?.speedChanged?(task) }
        case .postProcessing: if let task { taskCallbacks?.postProcessingChanged?(task) }
        case .added, .removed, .indexWriteFailed, .current: break
        }
    }

    /// Ends every stream; later subscribers get a stream that has ended.
    func close() {
        let streams = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [:] }
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in streams { continuation.finish() }
    }
}
