import Testing

@testable import StreamKitHTTPServer

/// Which connection the table gives up for a new one, as event → decision tables, no sockets.
@Suite struct HTTPConnectionTableTests {
    typealias Table = HTTPConnectionTable
    let start = ContinuousClock.now

    private func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    /// One step of a scenario and, for an admission, the decision expected.
    enum Step {
        /// Connection `id` from `client` arrives at second `at`, on loop `id % 2`.
        case connect(UInt64, client: String, at: Int, expect: Expected)
        case busy(UInt64)
        case idle(UInt64, at: Int)
        case declined(UInt64)
        case closed(UInt64)
    }

    enum Expected: Equatable {
        case admit(closing: [UInt64])
        case refuse
    }

    /// Runs `steps`, checking each decision; returns the table for further checks.
    @discardableResult
    private func run(cap: Int, perClient: Int, _ steps: [Step]) -> Table {
        var table = Table(maximumConnections: cap, maximumConnectionsPerClient: perClient)
        for (index, step) in steps.enumerated() {
            switch step {
            case .connect(let id, let client, let second, let expected):
                let decision = table.admit(id, client: client, loop: Int(id % 2), now: at(second))
                switch decision {
                case .admit(let closing):
                    #expect(expected == .admit(closing: closing.map(\.connection)), "step \(index)")
                    for eviction in closing { #expect(eviction.loop == Int(eviction.connection % 2)) }
                case .refuse:
                    #expect(expected == .refuse, "step \(index)")
                }
            case .busy(let id): table.becameBusy(id)
            case .idle(let id, let second): table.becameIdle(id, now: at(second))
            case .declined(let id): table.evictionDeclined(id)
            case .closed(let id): table.removed(id)
            }
        }
        return table
    }

    @Test func underTheLimitsNothingIsClosed() {
        let table = run(
            cap: 3, perClient: 3,
            [
                .connect(1, client: "a", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "a", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "b", at: 2, expect: .admit(closing: [])),
            ])
        #expect(table.count == 3 && table.count(of: "a") == 2)
    }

    @Test func atTheCapTheLongestIdleIsClosed() {
        run(
            cap: 3, perClient: 3,
            [
                .connect(1, client: "a", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "b", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "c", at: 2, expect: .admit(closing: [])),
                // 1 answered a request at 5 and is idle since; 2 has been idle since 1.
                .busy(1), .idle(1, at: 5),
                .connect(4, client: "d", at: 6, expect: .admit(closing: [2])),
                .connect(5, client: "d", at: 7, expect: .admit(closing: [3])),
                .connect(6, client: "e", at: 8, expect: .admit(closing: [1])),
            ])
    }

    @Test func busyConnectionsAreNeverClosedAndWithNoneIdleTheNewOneIsRefused() {
        let table = run(
            cap: 3, perClient: 3,
            [
                .connect(1, client: "a", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "a", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "b", at: 2, expect: .admit(closing: [])),
                .busy(1), .busy(3),
                .connect(4, client: "c", at: 3, expect: .admit(closing: [2])),
                .busy(4),
                .connect(5, client: "c", at: 4, expect: .refuse),
                .idle(3, at: 5),
                .connect(6, client: "c", at: 6, expect: .admit(closing: [3])),
            ])
        #expect(table.count == 3 && table.count(of: "a") == 1 && table.count(of: "b") == 0)
    }

    @Test func overItsOwnLimitAClientDisplacesOnlyItsOwnIdleConnection() {
        let table = run(
            cap: 10, perClient: 2,
            [
                .connect(1, client: "other", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "a", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "a", at: 2, expect: .admit(closing: [])),
                // 1 is idle the longest, but belongs to another client.
                .connect(4, client: "a", at: 3, expect: .admit(closing: [2])),
                .busy(3), .busy(4),
                .connect(5, client: "a", at: 4, expect: .refuse),
                .connect(6, client: "b", at: 5, expect: .admit(closing: [])),
            ])
        #expect(table.count == 4 && table.count(of: "a") == 2)
    }

    @Test func aClientOverItsLimitAtTheCapFreesOneSlotForBoth() {
        run(
            cap: 3, perClient: 2,
            [
                .connect(1, client: "b", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "a", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "a", at: 2, expect: .admit(closing: [])),
                .connect(4, client: "a", at: 3, expect: .admit(closing: [2])),
            ])
    }

    @Test func aDeclinedEvictionCountsAgainAndTheNextAdmissionCatchesUp() {
        let table = run(
            cap: 2, perClient: 2,
            [
                .connect(1, client: "a", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "b", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "c", at: 2, expect: .admit(closing: [1])),
                // 1 received a request before its loop came to close it.
                .busy(1), .declined(1),
                .connect(4, client: "d", at: 3, expect: .admit(closing: [2, 3])),
            ])
        #expect(table.count == 2)
    }

    @Test func closedConnectionsFreeTheirSlotsOnce() {
        let table = run(
            cap: 2, perClient: 2,
            [
                .connect(1, client: "a", at: 0, expect: .admit(closing: [])),
                .connect(2, client: "a", at: 1, expect: .admit(closing: [])),
                .connect(3, client: "a", at: 2, expect: .admit(closing: [1])),
                .closed(1), .closed(1), .closed(2),
                .connect(4, client: "a", at: 3, expect: .admit(closing: [])),
            ])
        #expect(table.count == 2 && table.count(of: "a") == 2)
    }

    @Test func thePerClientLimitIsNeverAboveTheCap() {
        #expect(Table(maximumConnections: 4, maximumConnectionsPerClient: 256).maximumConnectionsPerClient == 4)
        #expect(Table(maximumConnections: 0, maximumConnectionsPerClient: 0).maximumConnections == 1)
    }
}
