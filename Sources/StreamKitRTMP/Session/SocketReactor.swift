#if os(Linux)
import Glibc
import StreamKitCore
import Synchronization

/// One epoll loop for every RTMP socket in the process: tasks waiting for a socket to become
/// readable or writable register here and are resumed by the reactor's thread, with deadlines
/// kept by the same loop (no timer per wait).
///
/// Registrations are one-shot (`EPOLLONESHOT`): a descriptor is watched only while someone waits
/// on it, so unread data never makes the loop spin, and a wake-up costs one thread switch
/// instead of the several a Dispatch source (manager thread, handler thread) costs.
final class SocketReactor: Sendable {
    typealias Outcome = ReadinessOutcome
    typealias Direction = ReadinessDirection

    /// The reactor of this process, started on first use; `nil` when epoll or eventfd cannot be created.
    static let shared: SocketReactor? = SocketReactor()

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Outcome, Never>?
        var deadline: ContinuousClock.Instant?
        /// The descriptor is watched only from this moment (read coalescing).
        var notBefore: ContinuousClock.Instant?
        /// After a wake-up, how long the next read waits before watching again.
        var coalescing: Duration?
        /// Called when the descriptor becomes ready (status events).
        var onReady: (@Sendable () -> Void)?
    }

    private struct Registration {
        var read: Waiter?
        var write: Waiter?
        var added = false
        /// A read wait registered before this moment does not watch the descriptor until then.
        var quietUntil: ContinuousClock.Instant?
    }

    private struct State {
        var registrations: [Int32: Registration] = [:]
        var nextID = 0
        /// When the loop will next wake on its own; a waiter with an earlier deadline must wake it.
        var wakeAt: ContinuousClock.Instant?
        var sleeping = false
        /// Waits cancelled before they registered.
        var cancelledIDs: Set<Int> = []
    }

    /// The process's shared readiness mechanism; descriptors are registered with themselves as token.
    private let poller: EventPoller
    private let state = Mutex(State())

    private init?() {
        guard let poller = try? EventPoller(capacity: 64) else { return nil }
        self.poller = poller
        let box = Unmanaged.passRetained(ReactorThreadBox(reactor: self))
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<ReactorThreadBox>.fromOpaque(argument!).takeRetainedValue()
                box.reactor.run()
                return nil
            }, box.toOpaque())
        pthread_detach(thread)
    }

    /// Waits until `descriptor` is ready for `direction`, `timeout` passes, or the task is cancelled;
    /// `onReady` is called on the reactor's thread when it becomes ready.
    ///
    /// With `coalescing`, a read woken at time T makes the next read wait of this descriptor start
    /// watching only at T + `coalescing`: bytes gather meanwhile, and the reactor's own wake-up at
    /// that moment (planned when it woke the reader) costs no extra signal.
    func wait(
        _ descriptor: Int32, _ direction: Direction, timeout: Duration?, coalescing: Duration? = nil,
        onReady: (@Sendable () -> Void)? = nil
    ) async -> Outcome {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                register(
                    descriptor, direction,
                    Waiter(
                        id: id, continuation: continuation, deadline: timeout.map { .now + $0 }, notBefore: nil,
                        coalescing: direction == .read ? coalescing : nil, onReady: onReady))
            }
        } onCancel: {
            finish(descriptor, direction, id: id, with: .cancelled)
        }
    }

    /// Reports the next readiness of `descriptor` to `onReady` without anyone waiting.
    func notify(_ descriptor: Int32, _ direction: Direction, onReady: @escaping @Sendable () -> Void) {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        register(
            descriptor, direction,
            Waiter(id: id, continuation: nil, deadline: nil, notBefore: nil, coalescing: nil, onReady: onReady),
            replacing: false)
    }

    /// Stops watching `descriptor` (before it is closed); its waiters end as cancelled.
    func remove(_ descriptor: Int32) {
        let registration = state.withLock { state in
            let registration = state.registrations.removeValue(forKey: descriptor)
            if registration?.added == true { poller.remove(descriptor) }
            return registration
        }
        registration?.read?.continuation?.resume(returning: .cancelled)
        registration?.write?.continuation?.resume(returning: .cancelled)
    }

    // MARK: Private

    private func register(_ descriptor: Int32, _ direction: Direction, _ waiter: Waiter, replacing: Bool = true) {
        var waiter = waiter
        var displaced: CheckedContinuation<Outcome, Never>?
        var refused = false
        let mustWake: Bool = state.withLock { state in
            if state.cancelledIDs.remove(waiter.id) != nil {
                refused = true
                return false
            }
            var registration = state.registrations[descriptor] ?? Registration()
            if direction == .read, let quietUntil = registration.quietUntil, quietUntil > .now {
                waiter.notBefore = quietUntil
            }
            switch direction {
            case .read:
                if !replacing && registration.read != nil { return false }
                displaced = registration.read?.continuation
                registration.read = waiter
            case .write:
                if !replacing && registration.write != nil { return false }
                displaced = registration.write?.continuation
                registration.write = waiter
            }
            arm(descriptor, &registration)
            state.registrations[descriptor] = registration
            guard let wakeNeeded = [waiter.deadline, waiter.notBefore].compactMap({ $0 }).min() else { return false }
            if let wakeAt = state.wakeAt, wakeAt <= wakeNeeded { return false }
            return state.sleeping
        }
        displaced?.resume(returning: .cancelled)
        if refused { waiter.continuation?.resume(returning: .cancelled) }
        if mustWake { signal() }
    }

    /// Sets the one-shot interest of `descriptor` to the directions someone waits for (and may be woken for now).
    private func arm(_ descriptor: Int32, _ registration: inout Registration, now: ContinuousClock.Instant = .now) {
        func due(_ waiter: Waiter?) -> Bool { waiter != nil && (waiter!.notBefore.map { $0 <= now } ?? true) }
        var interest: EventPoller.Interest = []
        if due(registration.read) { interest.insert(.read) }
        if due(registration.write) { interest.insert(.write) }
        guard !interest.isEmpty else { return }
        let token = UInt64(descriptor)
        if registration.added {
            _ = try? poller.modify(descriptor, token: token, interest: interest, trigger: .oneShot)
        } else {
            registration.added =
                (try? poller.add(descriptor, token: token, interest: interest, trigger: .oneShot)) != nil
        }
    }

    private func finish(_ descriptor: Int32, _ direction: Direction, id: Int, with outcome: Outcome) {
        let continuation: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            var registration = state.registrations[descriptor] ?? Registration()
            var taken: CheckedContinuation<Outcome, Never>?
            switch direction {
            case .read where registration.read?.id == id:
                taken = registration.read?.continuation
                registration.read = nil
            case .write where registration.write?.id == id:
                taken = registration.write?.continuation
                registration.write = nil
            default:
                // Not registered yet: refuse it when it comes.
                state.cancelledIDs.insert(id)
                return nil
            }
            state.registrations[descriptor] = registration
            return taken
        }
        continuation?.resume(returning: outcome)
    }

    private func signal() { poller.wake() }

    private func run() {
        var fired: [PollEvent] = []
        var ready: [(CheckedContinuation<Outcome, Never>?, (@Sendable () -> Void)?, Outcome)] = []
        var due: [Int32] = []
        while true {
            let timeout: Int32 = state.withLock { state in
                var next: ContinuousClock.Instant?
                func consider(_ instant: ContinuousClock.Instant?) {
                    if let instant, next == nil || instant < next! { next = instant }
                }
                for registration in state.registrations.values {
                    consider(registration.read?.deadline)
                    consider(registration.write?.deadline)
                    consider(registration.read?.notBefore)
                    consider(registration.quietUntil)
                }
                state.wakeAt = next
                state.sleeping = true
                guard let next else { return -1 }
                let remaining = next - ContinuousClock.now
                if remaining <= .zero { return 0 }
                let milliseconds =
                    remaining.components.seconds * 1_000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
                return Int32(clamping: milliseconds)
            }
            poller.wait(timeoutMilliseconds: timeout) { fired.append($0) }
            state.withLock { state in
                state.sleeping = false
                let now = ContinuousClock.now
                for event in fired {
                    if event.token == EventPoller.wakeToken {
                        poller.consumeWake()
                        continue
                    }
                    let descriptor = Int32(truncatingIfNeeded: event.token)
                    guard var registration = state.registrations[descriptor] else { continue }
                    if event.readable || event.failed, let waiter = registration.read {
                        ready.append((waiter.continuation, waiter.onReady, .ready))
                        registration.read = nil
                        if let coalescing = waiter.coalescing { registration.quietUntil = now + coalescing }
                    }
                    if event.writable || event.failed, let waiter = registration.write {
                        ready.append((waiter.continuation, waiter.onReady, .ready))
                        registration.write = nil
                    }
                    arm(descriptor, &registration, now: now)
                    state.registrations[descriptor] = registration
                }
                // Timers: deadlines passed, coalesced reads whose moment has come. Found first,
                // changed after, so the dictionary is not copied while it is iterated.
                for (descriptor, registration) in state.registrations {
                    let expired = [
                        registration.quietUntil, registration.read?.notBefore, registration.read?.deadline,
                        registration.write?.deadline,
                    ].contains { $0.map { $0 <= now } ?? false }
                    if expired { due.append(descriptor) }
                }
                for descriptor in due {
                    guard var registration = state.registrations[descriptor] else { continue }
                    if let quietUntil = registration.quietUntil, quietUntil <= now { registration.quietUntil = nil }
                    if let notBefore = registration.read?.notBefore, notBefore <= now {
                        registration.read?.notBefore = nil
                    }
                    if let deadline = registration.read?.deadline, deadline <= now {
                        ready.append((registration.read?.continuation, nil, .timedOut))
                        registration.read = nil
                    }
                    if let deadline = registration.write?.deadline, deadline <= now {
                        ready.append((registration.write?.continuation, nil, .timedOut))
                        registration.write = nil
                    }
                    arm(descriptor, &registration, now: now)
                    state.registrations[descriptor] = registration
                }
                due.removeAll(keepingCapacity: true)
            }
            fired.removeAll(keepingCapacity: true)
            for (continuation, onReady, outcome) in ready {
                onReady?()
                continuation?.resume(returning: outcome)
            }
            ready.removeAll(keepingCapacity: true)
        }
    }
}

/// Carries the reactor into its thread.
private final class ReactorThreadBox {
    let reactor: SocketReactor
    init(reactor: SocketReactor) { self.reactor = reactor }
}
#endif
