import Testing

@testable import StreamKitDownloads

@Suite struct ProgressGateTests {
    /// Reports within the interval are held back, except a run's final one: the demo's queue once
    /// ended at 78% with the task a success, its last figures held back as too soon.
    @Test func theFinalReportPassesTheInterval() {
        let gate = ProgressGate(interval: .seconds(3_600))
        let first = gate.report(done: 10, expected: 100, fraction: 0.1, speed: nil)
        #expect(first?.done == 10)
        #expect(gate.report(done: 50, expected: 100, fraction: 0.5, speed: nil) == nil)
        let final = gate.report(done: 100, expected: nil, fraction: 1, speed: nil, final: true)
        #expect(final?.done == 100 && final?.expected == nil && final?.fraction == 1)
        #expect(gate.report(done: 100, expected: nil, fraction: 1, speed: nil) == nil, "the interval starts again")
    }
}
