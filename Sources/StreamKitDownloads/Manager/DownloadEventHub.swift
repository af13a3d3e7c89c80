import Synchronization

/// Hands a ``DownloadManager``'s events to its subscribers' streams and to the callbacks. The
/// manager emits from its actor, so events keep their order. A subscriber whose stream is no
/// longer held by anyone is dropped at the next event (the hub holds buffers weakly).
final class DownloadEventHub: Sendable {
    private struct Subscriber {
        var filter: String?
        weak var buffer: DownloadEventBuffer?
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
    func subscribe(filter: String?, current: [DownloadEvent] = []) -> DownloadEventStream {
        let buffer = DownloadEventBuffer()
        for event in current { buffer.yield(event) }
        let subscribed = state.withLock { state in
            guard !state.closed else { return false }
            state.subscribers[state.nextKey] = Subscriber(filter: filter, buffer: buffer)
            state.nextKey += 1
            return true
        }
        if !subscribed { buffer.finish() }
        return DownloadEventStream(buffer: buffer)
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
        let (buffers, callbacks, taskCallbacks) = state.withLock { state in
            var buffers: [DownloadEventBuffer] = []
            var gone: [Int] = []
            for (key, subscriber) in state.subscribers {
                guard let buffer = subscriber.buffer else {
                    gone.append(key)
                    continue
                }
                if subscriber.filter == nil || subscriber.filter == event.taskID { buffers.append(buffer) }
            }
            for key in gone { state.subscribers[key] = nil }
            return (buffers, state.callbacks, event.taskID.flatMap { state.taskCallbacks[$0] })
        }
        for buffer in buffers { buffer.yield(event) }
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
        let buffers = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [:] }
            return state.subscribers.values.compactMap(\.buffer)
        }
        for buffer in buffers { buffer.finish() }
    }
}
