import Testing

@testable import StreamKitDownloads

/// The ramp of transfers at once: which windows step up, which step is taken back, which slots
/// wait or leave.
struct TransferRampTests {
    let start = ContinuousClock.now

    /// Feeds the ramp windows of the given rates (bytes a second), each a second long with enough
    /// items; returns the target after each window.
    private func targets(_ rates: [Int64], initial: Int = 8, maximum: Int = 15) -> (targets: [Int], ramp: TransferRamp)
    {
        var ramp = TransferRamp(initial: initial, maximum: maximum, startingAt: start)
        var total: Int64 = 0
        var targets: [Int] = []
        for (window, rate) in rates.enumerated() {
            total += rate
            let items = TransferRamp.windowItems(ramp.target)
            for item in 1...items {
                let at = start + .seconds(window) + .milliseconds(1000 * item / items)
                _ = ramp.itemFinished(bytesTransferred: total, at: at)
            }
            targets.append(ramp.target)
        }
        return (targets, ramp)
    }

    @Test func aStepThatFetchesMoreIsKeptAndTheRampStopsAtTheMaximum() {
        // Latency-bound: throughput follows the count.
        let (steps, ramp) = targets([8_000_000, 12_000_000, 15_000_000, 15_100_000])
        #expect(steps == [12, 15, 15, 15])
        #expect(ramp.settled)
        #expect(ramp.ceiling == 15)
    }

    @Test func aStepThatFetchesNoMoreIsTakenBackAndTheRampSettles() {
        // Rate-bound or loopback: four more transfers fetch 3% more.
        let (steps, ramp) = targets([80_000_000, 82_000_000, 200_000_000])
        #expect(steps == [12, 8, 8])
        #expect(ramp.settled)
        #expect(ramp.admits(slot: 7) == .take)
        #expect(ramp.admits(slot: 8) == .leave)
    }

    @Test func aGainBelowTenPercentIsNoGain() {
        #expect(targets([10_000_000, 10_900_000]).targets == [12, 8])
        #expect(targets([10_000_000, 11_100_000]).targets == [12, 15])
    }

    @Test func aWindowNeedsThreeRoundsOfItemsAndHalfASecond() {
        var ramp = TransferRamp(initial: 8, maximum: 15, startingAt: start)
        // 24 items in 0.4 s: too short.
        for item in 1...24 {
            let changed = ramp.itemFinished(bytesTransferred: Int64(item) << 20, at: start + .milliseconds(item * 16))
            #expect(!changed)
        }
        // Past half a second, the next item closes the window and steps up.
        let stepped = ramp.itemFinished(bytesTransferred: 30 << 20, at: start + .milliseconds(600))
        #expect(stepped)
        #expect(ramp.target == 12)
        #expect(ramp.admits(slot: 11) == .take)
        #expect(ramp.admits(slot: 12) == .wait)
        // 35 items over more than a second: not yet three rounds of 12.
        for item in 1...35 {
            let changed = ramp.itemFinished(bytesTransferred: (30 << 20) + Int64(item) << 20, at: start + .seconds(2))
            #expect(!changed)
        }
        let closed = ramp.itemFinished(bytesTransferred: 80 << 20, at: start + .seconds(2))
        #expect(closed)
    }

    @Test func aFixedCountIsSettledFromTheStart() {
        var ramp = TransferRamp(initial: 8, maximum: 8, startingAt: start)
        #expect(ramp.settled)
        #expect(ramp.ceiling == 8)
        let changed = ramp.itemFinished(bytesTransferred: 1 << 30, at: start + .seconds(5))
        #expect(!changed)
        #expect(ramp.admits(slot: 8) == .leave)
    }
}
