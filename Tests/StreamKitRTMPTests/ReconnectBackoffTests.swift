import StreamKitRTMP
import Testing

@Suite struct ReconnectBackoffTests {
    @Test func waitsDoubleUpToTheMaximum() {
        var backoff = ReconnectBackoff(limit: nil)
        let delays = (0..<8).map { _ in backoff.nextDelay() }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
    }

    @Test func theLimitCountsAttemptsSinceMediaLastArrived() {
        var backoff = ReconnectBackoff(limit: 2, initialDelay: .milliseconds(500), maximumDelay: .seconds(1))
        #expect(backoff.nextDelay() == .milliseconds(500))
        #expect(backoff.nextDelay() == .seconds(1))
        #expect(backoff.nextDelay() == nil)
        backoff.reset()
        #expect(backoff.nextDelay() == .milliseconds(500))
        var never = ReconnectBackoff(limit: 0)
        #expect(never.nextDelay() == nil)
    }
}
