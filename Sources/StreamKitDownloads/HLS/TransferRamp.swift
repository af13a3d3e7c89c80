/// How many transfers an HLS download runs at once when the user did not fix the number: it
/// starts at `initial` and adds `step` more while each step raises the throughput, up to `maximum`.
///
/// Over a link whose round trip, not its rate, bounds a connection (small segments far away),
/// each connection idles a round trip per segment, and more connections fetch more; over a link
/// whose rate is the bound, or on loopback, more connections fetch no more and cost the server.
/// The ramp measures instead of guessing: the bytes transferred in a window of at least
/// `windowItems(target)` finished items and ``minimumWindow`` of time, against the window before
/// the last step. A step that adds at least ``minimumGain`` is kept and followed by another; one that does
/// not is taken back, and the ramp settles for the rest of the download.
struct TransferRamp: Sendable, Equatable {
    /// Transfers allowed to take work now.
    private(set) var target: Int
    /// Whether the ramp stopped changing ``target``.
    private(set) var settled: Bool
    let maximum: Int
    let step: Int

    /// The least time a window lasts.
    static let minimumWindow: Duration = .milliseconds(500)
    /// The least gain in throughput a step must bring to be kept: 10%.
    static let minimumGain = 0.10

    private var baseline: Double?
    /// The count before the last step, to go back to.
    private var beforeStep: Int
    private var windowStart: ContinuousClock.Instant
    private var windowStartBytes: Int64 = 0
    private var windowItems = 0

    /// A ramp from `initial` to `maximum` transfers; settled from the start when `maximum` is not
    /// above `initial`.
    init(
        initial: Int, maximum: Int, step: Int = 4, startingAt start: ContinuousClock.Instant,
        bytesTransferred: Int64 = 0
    ) {
        precondition(initial >= 1 && step >= 1)
        target = initial
        beforeStep = initial
        self.maximum = max(initial, maximum)
        self.step = step
        settled = maximum <= initial
        windowStart = start
        windowStartBytes = bytesTransferred
    }

    /// The most transfers the ramp may ever allow.
    var ceiling: Int { settled ? target : maximum }

    /// Items a window counts at `target` transfers: three rounds of them.
    static func windowItems(_ target: Int) -> Int { 3 * target }

    /// What the transfer in slot `slot` (from 0) does next.
    func admits(slot: Int) -> Admission {
        if slot < target { return .take }
        return settled ? .leave : .wait
    }

    enum Admission: Equatable {
        /// Take the next item.
        case take
        /// Not yet: the ramp may still allow this slot.
        case wait
        /// Never: the ramp settled below this slot.
        case leave
    }

    /// Counts a finished item, given the bytes the download has transferred in all; returns
    /// whether ``target`` changed.
    mutating func itemFinished(bytesTransferred: Int64, at now: ContinuousClock.Instant) -> Bool {
        guard !settled else { return false }
        windowItems += 1
        let elapsed = windowStart.duration(to: now)
        guard windowItems >= Self.windowItems(target), elapsed >= Self.minimumWindow else { return false }
        let rate = Double(bytesTransferred - windowStartBytes) / elapsed.secondsValue
        windowStart = now
        windowStartBytes = bytesTransferred
        windowItems = 0
        guard let before = baseline else {
            // The first window: the rate at the initial count, then the first step.
            baseline = rate
            return raise()
        }
        guard rate >= before * (1 + Self.minimumGain) else {
            target = beforeStep
            settled = true
            return true
        }
        baseline = rate
        return raise()
    }

    private mutating func raise() -> Bool {
        guard target < maximum else {
            settled = true
            return false
        }
        beforeStep = target
        target = min(maximum, target + step)
        return true
    }
}
