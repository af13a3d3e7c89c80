import Foundation
import StreamKitTestSupport
import Testing

@testable import StreamKitTestSupport

/// The far link the network benchmark measures through: when bytes leave it (a token bucket that
/// holds a round trip of bytes, then the delay), and a real fetch through a relay over it.
struct RelayLinkTests {
    let start = ContinuousClock.now

    @Test func aFullBucketSendsAtOnceThenTheRateHolds() {
        let link = RelayLink(delay: .milliseconds(25), bytesPerSecond: 1_000_000)
        #expect(link.burst == 50_000)
        var pacer = RelayLink.Pacer(now: start, burst: link.burst)
        // 50 KB at once: only the delay.
        #expect(link.schedule(50_000, arriving: start, pacer: &pacer) == start + .milliseconds(25))
        // The next 100 KB wait for the bucket: 100 ms at 1 MB/s.
        let due = link.schedule(100_000, arriving: start, pacer: &pacer)
        #expect(abs((due - start - .milliseconds(125)) / .microseconds(1)) < 1)
        // A second of silence refills the bucket to its size, no more.
        let later = start + .seconds(2)
        #expect(link.schedule(50_000, arriving: later, pacer: &pacer) == later + .milliseconds(25))
        let after = link.schedule(10_000, arriving: later, pacer: &pacer)
        #expect(abs((after - later - .milliseconds(35)) / .microseconds(1)) < 1)
    }

    @Test func bytesLeaveInTheOrderTheyCame() {
        let link = RelayLink(delay: .milliseconds(5), bytesPerSecond: 100_000)
        var pacer = RelayLink.Pacer(now: start, burst: link.burst)
        var last = start
        for step in 0..<50 {
            let due = link.schedule(4_000, arriving: start + .milliseconds(step), pacer: &pacer)
            #expect(due >= last)
            last = due
        }
        // 200,000 bytes, of which a bucket's worth (16 KiB, the least) went at once.
        let expected = Double(200_000 - 16_384) / 100_000
        #expect(abs((last - start - .milliseconds(5)) / .seconds(1) - expected) < 0.001)
    }

    @Test(.requires(.nginx)) func aFetchThroughTheRelayTakesTheRoundTripAndTheRate() async throws {
        let root = try TestRun.makeTemporaryDirectory("link-origin")
        try Data(count: 400_000).write(to: root.appendingPathComponent("file.bin"))
        let nginx = try await Nginx.static(root: root)
        let relay = try TCPRelay(
            upstreamPort: nginx.port, link: RelayLink(delay: .milliseconds(25), bytesPerSecond: 1_000_000))
        let elapsed = try await runBlocking {
            let connection = try RawHTTPConnection(port: relay.port)
            let started = ContinuousClock.now
            try connection.send("GET /file.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200 && response.body.count == 400_000)
            return ContinuousClock.now - started
        }
        // A round trip (50 ms), then 400 KB less a bucket (50 KB) at 1 MB/s: 400 ms.
        #expect(elapsed >= .milliseconds(390), "\(elapsed)")
        #expect(elapsed < .milliseconds(390) * 3, "\(elapsed)")
        #expect(relay.mostOpenConnections == 1)
        await relay.stop()
        await nginx.stop()
    }
}
