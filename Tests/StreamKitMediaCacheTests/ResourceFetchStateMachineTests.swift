import StreamKitCore
import Testing

@testable import StreamKitMediaCache

/// The per-resource state machine as event → action tables: no sockets, no files, time injected.
@Suite struct ResourceFetchStateMachineTests {
    typealias Machine = ResourceFetchStateMachine
    let t0 = ContinuousClock.now
    let mib: Int64 = 1 << 20

    func r(_ id: Int) -> ReaderID { ReaderID(id) }
    func f(_ id: Int) -> FetchID { FetchID(id) }
    func range(_ lower: Int64, _ upper: Int64) -> ByteRange { ByteRange(lower, upper) }

    @Test func aReaderOfAnEmptyResourceStartsOneFetchForItsRangeAndWaits() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        #expect(machine.addReader(r(1), range: range(100, 600), now: t0) == [.startFetch(f(1), range(100, 600))])
        let (step, actions) = machine.read(r(1), at: 100, now: t0)
        #expect(step == .wait)
        #expect(actions.isEmpty)
        // Bytes arrive: the waiting reader gets them from the chunk in hand; the fetch goes on.
        let (keep, delivered) = machine.fetchReceived(f(1), range: range(100, 300), stored: true, now: t0)
        #expect(keep)
        #expect(delivered == [.resumeReader(r(1), .received(range(100, 300)))])
        #expect(machine.available == ByteRangeSet([range(100, 300)]))
        // The reader comes back for more while they are in flight: it waits again.
        #expect(machine.read(r(1), at: 300, now: t0).0 == .wait)
        let (lastKeep, last) = machine.fetchReceived(f(1), range: range(300, 600), stored: true, now: t0)
        #expect(lastKeep, "the request ended where it was asked to: read on to its clean end")
        #expect(last == [.resumeReader(r(1), .received(range(300, 600)))])
        #expect(machine.fetches.isEmpty)
        #expect(machine.read(r(1), at: 600, now: t0).0 == .end)
        #expect(machine.removeReader(r(1), now: t0).isEmpty)
        #expect(machine.isIdle)
    }

    @Test func cachedBytesAreReadFromDiskInBoundedStepsAndGapsAreFetchedAhead() {
        var configuration = Machine.Configuration()
        configuration.maximumReadLength = 100
        var machine = Machine(
            length: 1000, available: ByteRangeSet([range(0, 250), range(400, 500), range(700, 800)]),
            configuration: configuration)
        // Two gaps ahead get a fetch each (fetchesAheadPerReader = 2), the third waits its turn.
        #expect(
            machine.addReader(r(1), range: range(0, 1000), now: t0) == [
                .startFetch(f(1), range(250, 400)), .startFetch(f(2), range(500, 700)),
            ])
        #expect(machine.read(r(1), at: 0, now: t0).0 == .disk(range(0, 100)))
        // A reader that sends file ranges (no memory) asks for longer steps; still within the span.
        #expect(machine.read(r(1), at: 0, maximumLength: 1000, now: t0).0 == .disk(range(0, 250)))
        #expect(machine.read(r(1), at: 100, now: t0).0 == .disk(range(100, 200)))
        #expect(machine.read(r(1), at: 200, now: t0).0 == .disk(range(200, 250)))
        #expect(machine.read(r(1), at: 250, now: t0).0 == .wait)
        // The first gap arrives: the reader moves on, and the next gap ahead of it gets its fetch.
        let (_, actions) = machine.fetchReceived(f(1), range: range(250, 400), stored: true, now: t0)
        #expect(actions == [.resumeReader(r(1), .received(range(250, 400))), .startFetch(f(3), range(800, 1000))])
    }

    @Test func overlappingReadersShareTheFetchInFlightAndFetchOnlyWhatIsMissing() {
        var machine = Machine(length: 10 * mib, available: ByteRangeSet())
        #expect(machine.addReader(r(1), range: range(0, 4 * mib), now: t0) == [.startFetch(f(1), range(0, 4 * mib))])
        // A second reader inside the first's span, and past its end: only the part beyond is fetched.
        #expect(
            machine.addReader(r(2), range: range(1 * mib, 6 * mib), now: t0) == [
                .startFetch(f(2), range(4 * mib, 6 * mib))
            ])
        #expect(machine.read(r(2), at: 1 * mib, now: t0).0 == .wait)
        // A third reader entirely inside what is in flight fetches nothing.
        #expect(machine.addReader(r(3), range: range(2 * mib, 5 * mib), now: t0).isEmpty)
        #expect(machine.read(r(3), at: 2 * mib, now: t0).0 == .wait)
        let (_, actions) = machine.fetchReceived(f(1), range: range(0, 3 * mib), stored: true, now: t0)
        #expect(
            actions == [
                .resumeReader(r(2), .received(range(1 * mib, 3 * mib))),
                .resumeReader(r(3), .received(range(2 * mib, 3 * mib))),
            ])
        // Every fetch the machine ever asked for is disjoint from the others.
        #expect(machine.fetches.count == 2)
    }

    @Test func aReaderNearAFetchInFlightWaitsForItRatherThanAskingAgain() {
        var machine = Machine(length: 100 * mib, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 100 * mib), now: t0)
        // Within the join distance (2 MiB) of the fetch's next byte: it joins.
        #expect(machine.addReader(r(2), range: range(2 * mib, 3 * mib), now: t0).isEmpty)
        #expect(machine.read(r(2), at: 2 * mib, now: t0).0 == .wait)
        #expect(machine.fetches[f(1)]?.end == 100 * mib)
    }

    @Test func aSeekFarAheadOfTheFetchStartsItsOwnFetchAndTheOlderOneStopsThere() {
        var machine = Machine(length: 100 * mib, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 100 * mib), now: t0)
        // The player seeks to 60 MiB on a new connection before closing the old one.
        #expect(
            machine.addReader(r(2), range: range(60 * mib, 100 * mib), now: t0) == [
                .startFetch(f(2), range(60 * mib, 100 * mib))
            ])
        #expect(machine.fetches[f(1)]?.end == 60 * mib, "the first fetch now stops where the second begins")
        // The old connection closes: its fetch is needed by nobody and is cancelled.
        #expect(machine.removeReader(r(1), now: t0) == [.cancelFetch(f(1))])
        #expect(Array(machine.fetches.keys) == [f(2)])
    }

    @Test func aFastFetchIsWaitedForEvenWhenFarButASlowOneIsNot() {
        var configuration = Machine.Configuration()
        configuration.joinWait = .milliseconds(500)
        var fast = Machine(length: 200 * mib, available: ByteRangeSet(), configuration: configuration)
        _ = fast.addReader(r(1), range: range(0, 200 * mib), now: t0)
        _ = fast.fetchReceived(f(1), range: range(0, 1 * mib), stored: true, now: t0)
        // 100 MiB in the next second: 100 MiB/s; a reader 40 MiB ahead would wait 0.4 s.
        _ = fast.fetchReceived(f(1), range: range(1 * mib, 101 * mib), stored: true, now: t0 + .seconds(1))
        #expect(fast.addReader(r(2), range: range(141 * mib, 150 * mib), now: t0 + .seconds(1)).isEmpty)

        var slow = Machine(length: 200 * mib, available: ByteRangeSet(), configuration: configuration)
        _ = slow.addReader(r(1), range: range(0, 200 * mib), now: t0)
        _ = slow.fetchReceived(f(1), range: range(0, 1 * mib), stored: true, now: t0)
        _ = slow.fetchReceived(f(1), range: range(1 * mib, 2 * mib), stored: true, now: t0 + .seconds(1))
        // 1 MiB/s: 40 MiB ahead is 40 s away.
        #expect(
            slow.addReader(r(2), range: range(42 * mib, 50 * mib), now: t0 + .seconds(1)) == [
                .startFetch(f(2), range(42 * mib, 50 * mib))
            ])
    }

    @Test func aFetchCutShortByAnotherStopsAtTheCutAndKeepsOnlyItsPart() {
        var machine = Machine(length: 100 * mib, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 100 * mib), now: t0)
        _ = machine.addReader(r(2), range: range(10 * mib, 20 * mib), now: t0)
        #expect(machine.fetches[f(1)]?.end == 10 * mib)
        // A chunk that crosses the cut: only the part before it is the first fetch's.
        #expect(machine.usableRange(of: f(1), count: 12 * mib) == range(0, 10 * mib))
        let (keep, _) = machine.fetchReceived(f(1), range: range(0, 10 * mib), stored: true, now: t0)
        #expect(!keep, "the request went on past the cut: it must stop now")
        #expect(machine.fetches[f(1)] == nil)
        // Reader 1 still needs bytes after reader 2's range: a fetch for them follows.
        #expect(machine.fetches.values.contains { $0.requested == range(20 * mib, 100 * mib) })
    }

    @Test func bytesThatCouldNotBeStoredReachOnlyTheReadersWaitingForThem() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 1000), now: t0)
        _ = machine.addReader(r(2), range: range(0, 1000), now: t0)
        #expect(machine.read(r(1), at: 0, now: t0).0 == .wait)
        // Reader 2 is busy elsewhere (not waiting) when the unstored chunk passes.
        let (keep, actions) = machine.fetchReceived(f(1), range: range(0, 400), stored: false, now: t0)
        #expect(keep)
        #expect(actions == [.resumeReader(r(1), .received(range(0, 400)))])
        #expect(machine.available.isEmpty)
        // Reader 2 now asks for byte 0: nothing has it, so it gets a fetch of its own.
        let (step, refetch) = machine.read(r(2), at: 0, now: t0)
        #expect(step == .wait)
        #expect(refetch == [.startFetch(f(2), range(0, 400))])
        // Unstored bytes nobody waits for are lost: the fetch stops rather than lose more, and
        // reader 1, which still needs what follows, gets a fetch from there when it asks.
        let (goOn, next) = machine.fetchReceived(f(1), range: range(400, 500), stored: false, now: t0)
        #expect(!goOn)
        #expect(next == [.startFetch(f(3), range(400, 1000))])
        #expect(machine.fetches[f(1)] == nil)
    }

    @Test func aFailedFetchIsResumedFromTheByteItReachedThenItsReadersFail() {
        var configuration = Machine.Configuration()
        configuration.maximumAttempts = 2
        var machine = Machine(length: 1000, available: ByteRangeSet(), configuration: configuration)
        _ = machine.addReader(r(1), range: range(0, 1000), now: t0)
        _ = machine.fetchReceived(f(1), range: range(0, 300), stored: true, now: t0)
        #expect(machine.fetchEnded(f(1), failed: true, now: t0) == [.startFetch(f(2), range(300, 1000))])
        #expect(machine.read(r(1), at: 300, now: t0).0 == .wait)
        #expect(machine.fetchEnded(f(2), failed: true, now: t0) == [.failReader(r(1), .fetchFailed(f(2)))])
        #expect(machine.readers.isEmpty)
        #expect(machine.available == ByteRangeSet([range(0, 300)]), "what arrived stays cached")
    }

    @Test func aResponseOfAnotherLengthDropsEverythingAndFailsEveryReader() {
        var machine = Machine(length: 1000, available: ByteRangeSet([range(0, 100)]))
        _ = machine.addReader(r(1), range: range(0, 1000), now: t0)
        #expect(machine.read(r(1), at: 0, now: t0).0 == .disk(range(0, 100)))
        _ = machine.addReader(r(2), range: range(500, 600), now: t0)
        let actions = machine.fetchResponded(
            f(1), .partial(range(100, 1000), completeLength: 2000, sameRepresentation: true), now: t0)
        #expect(
            actions == [
                .discardCachedBytes(length: 2000), .failReader(r(1), .representationChanged),
                .failReader(r(2), .representationChanged), .cancelFetch(f(1)),
            ])
        #expect(machine.length == 2000)
        #expect(machine.available.isEmpty)
        #expect(machine.isIdle)
    }

    @Test func aChangedValidatorWithTheSameLengthKeepsReadersThatSawNothingYet() {
        var machine = Machine(length: 1000, available: ByteRangeSet([range(0, 100)]))
        _ = machine.addReader(r(1), range: range(0, 1000), now: t0)
        _ = machine.read(r(1), at: 0, now: t0)  // delivered the old bytes 0..<100
        _ = machine.addReader(r(2), range: range(500, 600), now: t0)
        #expect(machine.read(r(2), at: 500, now: t0).0 == .wait)
        // Fetch 1 (100..<1000) answers 200 with a new validator: the whole new representation.
        let actions = machine.fetchResponded(f(1), .whole(length: 1000, sameRepresentation: false), now: t0)
        #expect(actions == [.discardCachedBytes(length: 1000), .failReader(r(1), .representationChanged)])
        #expect(machine.fetches[f(1)]?.readsWhole == true)
        #expect(machine.fetches[f(1)]?.position == 0)
        // Reader 2 gets the new bytes when the stream reaches 500.
        let (_, delivered) = machine.fetchReceived(f(1), range: range(0, 800), stored: true, now: t0)
        #expect(delivered == [.resumeReader(r(2), .received(range(500, 600)))])
    }

    @Test func anOriginThatIgnoresRangeIsReadAsOneStreamFromByteZero() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 200), now: t0)
        _ = machine.addReader(r(2), range: range(600, 1000), now: t0)
        #expect(machine.fetches.count == 2)
        // The 200 comes with the same validator: Range is not supported; one stream brings all.
        #expect(
            machine.fetchResponded(f(1), .whole(length: 1000, sameRepresentation: true), now: t0) == [
                .cancelFetch(f(2))
            ])
        #expect(machine.rangesUnsupported)
        #expect(machine.read(r(2), at: 600, now: t0).0 == .wait)
        #expect(machine.fetches.count == 1, "a reader far ahead waits for the stream: no ranged fetch would work")
        let (keep, actions) = machine.fetchReceived(f(1), range: range(0, 700), stored: true, now: t0)
        #expect(keep)
        #expect(actions == [.resumeReader(r(2), .received(range(600, 700)))])
    }

    @Test func a416WithANewLengthMeansTheResourceShrank() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(900, 1000), now: t0)
        let actions = machine.fetchResponded(f(1), .notSatisfiable(completeLength: 800), now: t0)
        #expect(
            actions == [
                .cancelFetch(f(1)), .discardCachedBytes(length: 800), .failReader(r(1), .representationChanged),
            ])
    }

    @Test func aShorterPartialResponseLeavesTheRestToAnotherFetch() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 1000), now: t0)
        // The rest is asked for at once, in parallel.
        #expect(
            machine.fetchResponded(
                f(1), .partial(range(0, 400), completeLength: 1000, sameRepresentation: true), now: t0)
                == [.startFetch(f(2), range(400, 1000))])
        let (keep, actions) = machine.fetchReceived(f(1), range: range(0, 400), stored: true, now: t0)
        #expect(keep, "the response ends where the origin said: read it to its clean end")
        #expect(actions.isEmpty)
    }

    @Test func adoptingTheFirstResponseCoversItsBytes() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        #expect(machine.adoptFetch(delivering: range(0, 1000), readsWhole: false) == f(1))
        #expect(machine.addReader(r(1), range: range(0, 500), now: t0).isEmpty)
        // Only reader 1 needs 0..<500: the adopted fetch still runs; once it passes 500 nobody needs it.
        let (keep, _) = machine.fetchReceived(f(1), range: range(0, 600), stored: true, now: t0)
        #expect(!keep)
        #expect(machine.adoptFetch(delivering: range(100, 200), readsWhole: false) == nil, "already on disk")
    }

    @Test func stoppingEverythingFailsReadersAndCancelsFetches() {
        var machine = Machine(length: 1000, available: ByteRangeSet())
        _ = machine.addReader(r(1), range: range(0, 1000), now: t0)
        _ = machine.addReader(r(2), range: range(0, 10), now: t0)
        #expect(
            machine.stopAll(.removed) == [.failReader(r(1), .removed), .failReader(r(2), .removed), .cancelFetch(f(1))])
        #expect(machine.isIdle)
    }

    @Test func fetchesPerResourceAreBounded() {
        var configuration = Machine.Configuration()
        configuration.maximumConcurrentFetches = 2
        var machine = Machine(
            length: 1000, available: ByteRangeSet([range(100, 200), range(300, 400), range(500, 600)]),
            configuration: configuration)
        _ = machine.addReader(r(1), range: range(0, 250), now: t0)
        _ = machine.addReader(r(2), range: range(450, 1000), now: t0)
        #expect(machine.fetches.count == 2)
        #expect(Set(machine.fetches.values.map(\.requested)) == [range(0, 100), range(200, 250)])
    }
}
