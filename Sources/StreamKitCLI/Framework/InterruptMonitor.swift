import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT (Ctrl-C) and SIGTERM into a call, so that a command can stop cleanly, save its
/// state and exit 130 instead of dying mid-write.
///
/// While it is active the signals' default action is replaced; ``stop()`` restores it.
public final class InterruptMonitor: Sendable {
    /// Counts the signals; shared with the signal handlers.
    private final class Flag: Sendable {
        let count = Atomic<Int>(0)
    }

    private let signals: [Int32]
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let flag = Flag()

    /// Starts watching `signals`, calling `onInterrupt` once on the first one.
    public convenience init(signals: [Int32] = [SIGINT, SIGTERM], onInterrupt: @escaping @Sendable () -> Void) {
        self.init(signals: signals) { count in
            if count == 1 { onInterrupt() }
        }
    }

    /// Starts watching `signals`, calling `onEachInterrupt` with 1 for the first, 2 for the
    /// second, and so on (a job can stop gently on the first and at once on the second).
    ///
    /// One monitor per process at a time: the signals' dispositions belong to it, and a second
    /// monitor would take them over.
    public init(signals: [Int32] = [SIGINT, SIGTERM], onEachInterrupt: @escaping @Sendable (Int) -> Void) {
        self.signals = signals
        let flag = self.flag
        sources = Mutex(
            signals.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    onEachInterrupt(flag.count.add(1, ordering: .acquiringAndReleasing).newValue)
                }
                source.resume()
                return source
            })
    }

    /// Whether a signal arrived.
    public var wasInterrupted: Bool { flag.count.load(ordering: .acquiring) > 0 }

    /// Stops watching and restores the default actions.
    public func stop() {
        let active = sources.withLock { sources in
            defer { sources = [] }
            return sources
        }
        for source in active { source.cancel() }
        if !active.isEmpty { for number in signals { signal(number, SIG_DFL) } }
    }

    deinit { stop() }
}
