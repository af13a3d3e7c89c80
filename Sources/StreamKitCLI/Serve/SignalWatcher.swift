import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Delivers SIGINT, SIGTERM and SIGHUP as values on an `AsyncStream` instead of ending the process.
///
/// While it exists the signals reach it; `cancel()` gives them back their default effect.
final class SignalWatcher: Sendable {
    /// The signals received, in order.
    let signals: AsyncStream<Int32>
    private let registration: Mutex<SignalHub.Registration?>

    init(_ watched: [Int32] = InterruptMonitor.stopSignals) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        registration = Mutex(SignalHub.shared.register(watched) { continuation.yield($0) })
    }

    /// Stops watching.
    func cancel() {
        if let registration = registration.withLock({ $0.take() }) { SignalHub.shared.unregister(registration) }
    }
}
