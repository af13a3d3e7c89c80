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
    /// Set by the first signal; shared with the signal handlers.
    private final class Flag: Sendable {
        let fired = Atomic<Bool>(false)
    }

    private let signals: [Int32]
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let flag = Flag()

    /// Starts watching `signals`, calling `onInterrupt` once on the first one.
    public init(signals: [Int32] = [SIGINT, SIGTERM], onInterrupt: @escaping @Sendable () -> Void) {
        self.signals = signals
        let flag = self.flag
        sources = Mutex(
            signals.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    if !flag.fired.exchange(true, ordering: .acquiringAndReleasing) { onInterrupt() }
                }
                source.resume()
                return source
            })
    }

    /// Whether a signal arrived.
    public var wasInterrupted: Bool { flag.fired.load(ordering: .acquiring) }

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
