import Synchronization

/// Lets progress through at most once per interval, and measures the speed.
final class ProgressGate: Sendable {
    struct Report: Sendable {
        var done: Int64
        var expected: Int64?
        var fraction: Double?
        var speed: Double
        /// For a recording, the seconds of media recorded.
        var seconds: Double?
    }

    private struct State {
        var last: ContinuousClock.Instant?
        var lastDone: Int64 = 0
        var speed: Double = 0
    }

    private let interval: Duration
    private let state = Mutex(State())

    init(interval: Duration) { self.interval = interval }

    /// A report when the interval has passed since the last one (the first always passes), or
    /// when it is the `final` one of a run, which must not be lost.
    func report(
        done: Int64, expected: Int64?, fraction: Double?, speed: Double?, seconds: Double? = nil, final: Bool = false
    ) -> Report? {
        state.withLock { state in
            let now = ContinuousClock.now
            if let last = state.last {
                let elapsed = last.duration(to: now)
                if elapsed >= interval {
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    let instant = Double(max(0, done - state.lastDone)) / max(seconds, 1e-3)
                    state.speed = state.speed == 0 ? instant : state.speed * 0.7 + instant * 0.3
                } else if !final {
                    return nil
                }
            }
            state.last = now
            state.lastDone = done
            return Report(
                done: done, expected: expected, fraction: fraction, speed: speed ?? state.speed, seconds: seconds)
        }
    }
}

extension ProgressGate {
    /// Where a running task's progress goes: through the gate, then into a stream that the
    /// manager reads.
    struct Sink: Sendable {
        let gate: ProgressGate
        let continuation: AsyncStream<Report>.Continuation

        /// Passes the progress on when the gate lets it through; a `final` report always passes.
        func report(
            done: Int64, expected: Int64?, fraction: Double?, speed: Double?, seconds: Double? = nil,
            final: Bool = false
        ) {
            if let report = gate.report(
                done: done, expected: expected, fraction: fraction, speed: speed, seconds: seconds, final: final)
            {
                continuation.yield(report)
            }
        }
    }
}
