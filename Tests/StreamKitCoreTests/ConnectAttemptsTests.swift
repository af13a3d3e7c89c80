import StreamKitCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The order and deadlines of connecting to several addresses, with no socket.
@Suite struct ConnectAttemptsTests {
    static func address(_ last: UInt8) -> ResolvedAddress { ResolvedAddress(family: AF_INET, bytes: [last]) }
    static let start = ContinuousClock.now

    /// Each address but the last gets a second at most; the last gets what is left.
    @Test(arguments: [
        (3, Duration.seconds(10), [Duration.seconds(1), .seconds(2), .seconds(10)]),
        (1, .seconds(10), [.seconds(10)]),
        (3, .milliseconds(1_500), [.seconds(1), .milliseconds(1_500), .milliseconds(1_500)]),
    ])
    func eachAddressButTheLastGetsASecond(count: Int, timeout: Duration, deadlines: [Duration]) {
        var attempts = ConnectAttempts(
            addresses: (0..<count).map { Self.address(UInt8($0)) }, deadline: Self.start + timeout)
        var seen: [Duration] = []
        var now = Self.start
        while let attempt = attempts.next(now: now) {
            seen.append(attempt.deadline - Self.start)
            now = attempt.deadline  // each attempt times out
        }
        #expect(seen == deadlines)
    }

    @Test func withoutAPerAddressBoundEachGetsTheWholeDeadline() {
        var attempts = ConnectAttempts(
            addresses: [Self.address(1), Self.address(2)], deadline: Self.start + .seconds(5), perAddress: nil)
        let first = attempts.next(now: Self.start)
        #expect(first?.deadline == Self.start + .seconds(5) && first?.hasNext == true)
        #expect(attempts.next(now: Self.start)?.hasNext == false)
        #expect(attempts.next(now: Self.start) == nil)
    }

    @Test func aTimeoutMovesOnOnlyWhileAddressesAndTimeRemain() {
        var attempts = ConnectAttempts(
            addresses: [Self.address(1), Self.address(2)], deadline: Self.start + .seconds(3))
        let first = attempts.next(now: Self.start)!
        #expect(attempts.movesOnAfterTimeout(of: first, now: Self.start + .seconds(1)))
        #expect(!attempts.movesOnAfterTimeout(of: first, now: Self.start + .seconds(3)))
        let last = attempts.next(now: Self.start + .seconds(1))!
        #expect(!attempts.movesOnAfterTimeout(of: last, now: Self.start + .seconds(2)))
    }

    @Test func theLastFailureIsKept() {
        var attempts = ConnectAttempts(addresses: [Self.address(1)], deadline: Self.start + .seconds(1))
        #expect(attempts.lastError == ECONNREFUSED)
        attempts.failed(EHOSTUNREACH)
        #expect(attempts.lastError == EHOSTUNREACH)
    }

    @Test func loopbackResolvesAndAnUnknownNameDoesNot() throws {
        let addresses = try ResolvedAddress.resolve(host: "127.0.0.1", port: 80)
        #expect(addresses.first?.family == AF_INET)
        #expect(throws: ResolveError.self) { try ResolvedAddress.resolve(host: "no-such-host.invalid", port: 80) }
    }
}
