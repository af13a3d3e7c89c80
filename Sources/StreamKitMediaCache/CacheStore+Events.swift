import StreamKitCore

// Events: every change of the cache, to each subscriber.
extension CacheStore {
    /// A new stream of every event from now on.
    func events() -> AsyncStream<MediaCacheEvent> {
        let (stream, continuation) = AsyncStream<MediaCacheEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = locked { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.locked { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Reports a resource streamed without being kept.
    func publishPassThrough(url: String, length: Int64?) {
        publish([.passedThrough(url: url, length: length)])
    }

    /// Ends every event stream.
    func finishEvents() {
        let subscribers = locked { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    func publish(_ events: [MediaCacheEvent]) {
        guard !events.isEmpty else { return }
        let subscribers = locked { Array($0.subscribers.values) }
        for event in events {
            if case .evicted(let key, let bytes) = event { logger.debug("evicted \(key) (\(bytes) bytes)") }
            for subscriber in subscribers { subscriber.yield(event) }
        }
    }
}
