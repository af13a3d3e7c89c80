import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Delivers SIGINT and SIGTERM as values on an `AsyncStream` instead of ending the process.
///
/// While it exists the signals' default action is off; `cancel()` restores it.
final class SignalWatcher: Sendable {
    /// The signals received, in order.
    let signals: AsyncStream<Int32>
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let watched: [Int32]

    init(_ watched: [Int32] = [SIGINT, SIGTERM]) {
        self.watched = watched
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        var sources: [any DispatchSourceSignal] = []
        for number in watched {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            // `data` counts the signals since the handler last ran: two quick Ctrl-Cs are two.
            source.setEventHandler {
                for _ in 0..<max(1, source.data) { continuation.yield(number) }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = Mutex(sources)
    }

    /// Stops watching and restores the default actions.
    func cancel() {
        sources.withLock { sources in
            for source in sources {
                source.setEventHandler(handler: nil)  // the handler holds the source
                source.cancel()
            }
            sources = []
        }
        for number in watched { signal(number, SIG_DFL) }
    }
}
