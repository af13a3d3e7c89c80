import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal went away) into a call, so that a
/// command can stop cleanly, save its state and exit 130 instead of dying mid-write.
///
/// While it is active the signals reach it instead of ending the process; after ``stop()`` they
/// have their default effect again. Monitors may follow one another in a process (a demo's
/// download, then its serving); the newest active one receives the signals.
public final class InterruptMonitor: Sendable {
    /// Counts the signals; shared with the signal handlers.
    private final class Flag: Sendable {
        let count = Atomic<Int>(0)
    }

    private let flag = Flag()
    private let registration: Mutex<SignalHub.Registration?>

    /// The signals that ask a command to stop: Ctrl-C, `kill`, and a closed terminal or SSH session.
    public static let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Starts watching `signals`, calling `onInterrupt` once on the first one.
    public convenience init(signals: [Int32] = stopSignals, onInterrupt: @escaping @Sendable () -> Void) {
        self.init(signals: signals) { count in
            if count == 1 { onInterrupt() }
        }
    }

    /// Starts watching `signals`, calling `onEachInterrupt` with 1 for the first, 2 for the
    /// second, and so on (a job can stop gently on the first and at once on the second).
    public init(signals: [Int32] = stopSignals, onEachInterrupt: @escaping @Sendable (Int) -> Void) {
        let flag = self.flag
        registration = Mutex(
            SignalHub.shared.register(signals) { _ in
                onEachInterrupt(flag.count.add(1, ordering: .acquiringAndReleasing).newValue)
            })
    }

    /// Whether a signal arrived.
    public var wasInterrupted: Bool { flag.count.load(ordering: .acquiring) > 0 }

    /// Stops watching; the signals have their default effect again unless another monitor watches.
    public func stop() {
        if let registration = registration.withLock({ $0.take() }) { SignalHub.shared.unregister(registration) }
    }

    deinit { stop() }
}

/// The process's one Dispatch signal source per signal, made on first use and kept: libdispatch
/// installs its handler for a signal once, so a source cancelled and made again after the
/// disposition was reset would never fire. Signals go to the newest registration watching them;
/// with none, the signal's default action is taken (the process ends as it would have).
final class SignalHub: Sendable {
    static let shared = SignalHub()

    /// A registered handler, to unregister.
    struct Registration: Sendable {
        let id: UInt64
    }

    private struct Entry {
        let id: UInt64
        let signals: [Int32]
        let handler: @Sendable (Int32) -> Void
    }
    private struct State {
        var nextID: UInt64 = 0
        var entries: [Entry] = []
        var sources: [Int32: any DispatchSourceSignal] = [:]
    }
    private let state = Mutex(State())

    /// Sends `signals` to `handler` (with the signal's number) until unregistered.
    func register(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) -> Registration {
        state.withLock { state in
            for number in signals where state.sources[number] == nil {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                // `data` counts the signals since the handler last ran: two quick Ctrl-Cs are two.
                source.setEventHandler { [weak self] in
                    for _ in 0..<max(1, source.data) { self?.deliver(number) }
                }
                source.resume()
                state.sources[number] = source
            }
            state.nextID += 1
            state.entries.append(Entry(id: state.nextID, signals: signals, handler: handler))
            return Registration(id: state.nextID)
        }
    }

    func unregister(_ registration: Registration) {
        state.withLock { $0.entries.removeAll { $0.id == registration.id } }
    }

    private func deliver(_ number: Int32) {
        let handler = state.withLock { state in state.entries.last { $0.signals.contains(number) }?.handler }
        if let handler {
            handler(number)
        } else {
            // Nobody is watching: what the default action would have done.
            signal(number, SIG_DFL)
            raise(number)
        }
    }
}
