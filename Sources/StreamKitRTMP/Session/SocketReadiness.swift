import Dispatch
import Synchronization

/// How a wait for socket readiness ended.
enum ReadinessOutcome: Sendable {
    case ready
    case timedOut
    case cancelled
}

/// Which readiness a wait is for.
enum ReadinessDirection: Sendable {
    case read
    case write
}

/// Waits for a non-blocking socket to become readable or writable without holding a thread:
/// a Dispatch source watches the descriptor only while someone waits, and resumes the waiter.
final class SocketReadiness: Sendable {
    typealias Direction = ReadinessDirection
    typealias Outcome = ReadinessOutcome

    private struct State {
        /// Whether the source is suspended (it is created inactive, which counts as suspended).
        var suspended = true
        var activated = false
        var cancelled = false
        var waiter: CheckedContinuation<Outcome, Never>?
        var generation = 0
    }

    // Safe to send: Dispatch sources are thread-safe objects; every suspend/resume/cancel is done
    // under `state`'s lock so their counts stay balanced.
    private nonisolated(unsafe) let source: any DispatchSourceProtocol
    private let queue: DispatchQueue
    private let state = Mutex(State())
    /// Called (outside the lock) each time the descriptor becomes ready, for status events.
    private let onReady: @Sendable () -> Void

    /// Watches `descriptor`; `onCancelled` runs once Dispatch has let go of it (the time to close it).
    init(
        descriptor: Int32, direction: Direction, queue: DispatchQueue, onReady: @escaping @Sendable () -> Void,
        onCancelled: @escaping @Sendable () -> Void
    ) {
        self.queue = queue
        self.onReady = onReady
        switch direction {
        case .read: source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        case .write: source = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
        }
        source.setEventHandler { [weak self] in self?.fire() }
        source.setCancelHandler(handler: onCancelled)
    }

    deinit { cancel() }

    /// Waits until the descriptor is ready, `timeout` passes, or ``cancel()`` is called.
    func wait(timeout: Duration?) async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let generation: Int? = state.withLock { state in
                    guard !state.cancelled else { return nil }
                    precondition(state.waiter == nil, "only one task may wait for readiness at a time")
                    state.waiter = continuation
                    state.generation += 1
                    watch(&state)
                    return state.generation
                }
                guard let generation else {
                    continuation.resume(returning: .cancelled)
                    return
                }
                if let timeout {
                    queue.asyncAfter(deadline: .now() + timeout.dispatchInterval) { [weak self] in
                        self?.expire(generation)
                    }
                }
            }
        } onCancel: {
            self.finishWaiter(with: .cancelled)
        }
    }

    /// Watches the descriptor with nobody waiting, so that the next readiness is reported to `onReady`.
    func arm() {
        state.withLock { state in
            guard !state.cancelled else { return }
            watch(&state)
        }
    }

    /// Lets a suspended source watch the descriptor again (activating it the first time). Called
    /// under the lock.
    private func watch(_ state: inout State) {
        guard state.suspended else { return }
        state.suspended = false
        if state.activated {
            source.resume()
        } else {
            state.activated = true
            source.activate()
        }
    }

    /// Ends any wait and stops watching the descriptor for good.
    func cancel() {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            if !state.activated {
                state.activated = true
                source.activate()
            } else if state.suspended {
                source.resume()
            }
            state.suspended = false
            source.cancel()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: .cancelled)
    }

    private func fire() {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            guard !state.cancelled, !state.suspended else { return nil }
            state.suspended = true
            source.suspend()
            defer { state.waiter = nil }
            return state.waiter
        }
        onReady()
        waiter?.resume(returning: .ready)
    }

    private func expire(_ generation: Int) {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            guard state.generation == generation, let waiter = state.waiter, !state.cancelled else { return nil }
            if !state.suspended {
                state.suspended = true
                source.suspend()
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: .timedOut)
    }

    private func finishWaiter(with outcome: Outcome) {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            guard let waiter = state.waiter else { return nil }
            if !state.suspended && !state.cancelled {
                state.suspended = true
                source.suspend()
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: outcome)
    }
}

extension Duration {
    /// The duration as a Dispatch interval, in nanoseconds.
    var dispatchInterval: DispatchTimeInterval {
        let parts = components
        let nanoseconds = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(nanoseconds.partialValue + parts.attoseconds / 1_000_000_000))
    }
}
