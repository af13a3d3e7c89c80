import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a relay carries bytes: as a network link with a one-way delay and a rate per connection
/// and direction (see ``Pacer``), for measuring a client over something like a real network on
/// a kernel without netem.
public struct RelayLink: Sendable, Equatable {
    /// How long bytes take from one side to the other; the round trip is twice this.
    public var delay: Duration
    /// Bytes a second each connection carries in each direction; `nil` for no limit.
    public var bytesPerSecond: Int?

    public init(delay: Duration, bytesPerSecond: Int? = nil) {
        self.delay = delay
        self.bytesPerSecond = bytesPerSecond
    }

    /// Loopback as it is: no delay, no rate.
    public static let direct = RelayLink(delay: .zero)

    var isDirect: Bool { delay == .zero && bytesPerSecond == nil }

    /// The pacing state of one direction of one connection: a token bucket that fills at the
    /// rate and holds a round trip's worth of bytes (rate x 2 x delay, at least 16 KiB), as a
    /// shaper on a path is set up (tc-tbf's burst at least the bandwidth-delay product): a
    /// connection that waited a round trip for its next request may send that much at once, and
    /// never more than the rate over any longer time.
    struct Pacer {
        var linkFree: ContinuousClock.Instant
        var tokens: Double
        var filledAt: ContinuousClock.Instant

        init(now: ContinuousClock.Instant, burst: Double) {
            linkFree = now
            tokens = burst
            filledAt = now
        }
    }

    /// The bytes the bucket holds when full.
    var burst: Double {
        guard let bytesPerSecond else { return .infinity }
        return max(16_384, Double(bytesPerSecond) * 2 * delay.seconds)
    }

    /// When `count` bytes that entered the link at `arriving` leave it: after the bytes before
    /// them, once the bucket holds them, then `delay` later.
    func schedule(_ count: Int, arriving: ContinuousClock.Instant, pacer: inout Pacer) -> ContinuousClock.Instant {
        var start = max(arriving, pacer.linkFree)
        if let bytesPerSecond {
            let rate = Double(max(1, bytesPerSecond))
            pacer.tokens = min(burst, pacer.tokens + pacer.filledAt.duration(to: start).seconds * rate)
            pacer.filledAt = start
            let lacking = Double(count) - pacer.tokens
            if lacking > 0 {
                start = start + .seconds(lacking / rate)
                pacer.filledAt = start
                pacer.tokens = 0
            } else {
                pacer.tokens -= Double(count)
            }
        }
        pacer.linkFree = start
        return start + delay
    }

    /// Bytes held in flight before the reader stops reading (and the sender's TCP window closes):
    /// the bytes the link holds while delaying and a full bucket, twice over, at least 256 KiB.
    var inFlightLimit: Int {
        let rate = Double(bytesPerSecond ?? 100_000_000)
        return max(256 << 10, Int(rate * delay.seconds * 6))
    }
}

/// One direction of a relayed connection carried as a ``RelayLink``: a reader thread queues
/// what it receives with the time it is due, a sender thread sends each chunk at that time.
final class DelayedPipe: @unchecked Sendable {
    private let link: RelayLink
    /// Guards everything below.
    private let condition = NSCondition()
    private var chunks: [(bytes: [UInt8], due: ContinuousClock.Instant)] = []
    private var head = 0
    private var queued = 0
    private var ended = false
    private var broken = false

    init(link: RelayLink) { self.link = link }

    /// Copies from `source` to `destination` through the link until end of stream, an error, or
    /// `limit` bytes; returns true when it stopped at `limit`. `sent` is told of every chunk sent.
    func run(from source: Int32, to destination: Int32, limit: Int?, sent: @escaping @Sendable (Int) -> Void) -> Bool {
        // Each chunk goes out when due, whole: Nagle's algorithm would hold a short last chunk
        // back until the peer's delayed ACK (40 ms), a delay no real link adds.
        var noDelay: Int32 = 1
        setsockopt(destination, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let done = DispatchSemaphore(value: 0)
        Thread { [self] in
            deliver(to: destination, sent: sent)
            done.signal()
        }.start()
        let reachedLimit = read(from: source, limit: limit)
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
        done.wait()
        return reachedLimit
    }

    private func read(from source: Int32, limit: Int?) -> Bool {
        var pacer = RelayLink.Pacer(now: .now, burst: link.burst)
        var total = 0
        while true {
            let wanted = limit.map { min(16_384, $0 - total) } ?? 16_384
            if wanted <= 0 { return true }
            var buffer = [UInt8](repeating: 0, count: wanted)
            let received = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, wanted, 0) }
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return false }
            buffer.removeLast(wanted - received)
            let due = link.schedule(received, arriving: .now, pacer: &pacer)
            total += received
            condition.lock()
            while queued >= link.inFlightLimit && !broken { condition.wait() }
            if broken {
                condition.unlock()
                return false
            }
            chunks.append((buffer, due))
            queued += received
            condition.broadcast()
            condition.unlock()
        }
    }

    private func deliver(to destination: Int32, sent: @Sendable (Int) -> Void) {
        while true {
            condition.lock()
            while head == chunks.count && !ended { condition.wait() }
            if head == chunks.count {
                condition.unlock()
                return
            }
            let chunk = chunks[head]
            head += 1
            if head > 256 {
                chunks.removeFirst(head)
                head = 0
            }
            condition.unlock()
            let wait = ContinuousClock.now.duration(to: chunk.due)
            if wait > .zero { Thread.sleep(forTimeInterval: wait.seconds) }
            var offset = 0
            while offset < chunk.bytes.count {
                let written = chunk.bytes[offset...].withUnsafeBytes {
                    send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    condition.lock()
                    broken = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                offset += written
            }
            sent(chunk.bytes.count)
            condition.lock()
            queued -= chunk.bytes.count
            condition.broadcast()
            condition.unlock()
        }
    }
}
