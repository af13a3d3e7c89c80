import StreamKitCore

/// Identifies one reader of a resource: a byte range a player (or a preload) asked for.
struct ReaderID: Hashable, Sendable, Comparable, CustomStringConvertible {
    let rawValue: Int
    init(_ rawValue: Int) { self.rawValue = rawValue }
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    var description: String { "reader \(rawValue)" }
}

/// Identifies one request to the origin for a span of a resource.
struct FetchID: Hashable, Sendable, Comparable, CustomStringConvertible {
    let rawValue: Int
    init(_ rawValue: Int) { self.rawValue = rawValue }
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    var description: String { "fetch \(rawValue)" }
}

/// What one resource's bytes are doing: which are on disk, which are on their way from the origin
/// (and how far each fetch got), and which readers wait for which bytes. Pure: no I/O, no clock of
/// its own (time comes in as an argument). ``ResourceCoordinator`` performs its actions.
///
/// The rules:
/// - Fetches cover disjoint spans, so overlapping readers never fetch the same bytes twice. A
///   reader whose next byte is missing waits for the fetch that will bring it, when that fetch is
///   near (``Configuration/joinDistance``) or fast enough to get there soon
///   (``Configuration/joinWait``); otherwise (a seek far ahead) it gets a fetch of its own and the
///   older fetch stops where the new one begins.
/// - Each reader gets fetches for its next gaps (up to ``Configuration/fetchesAheadPerReader``),
///   each asking exactly for the missing span, so that nothing is fetched that nobody asked for.
/// - A fetch whose remaining bytes no reader needs is cancelled: that is what a seek does to the
///   fetch of the position the player left.
/// - A response that shows another representation (other length, other validator, 200 to a
///   ranged request with a different or no validator) drops every cached byte and fails every
///   reader, whose response heads described the old one.
/// - An origin that ignores Range (200 with the same validator) is read as one stream from byte 0.
/// - A fetch that fails is resumed from the byte it reached, up to ``Configuration/maximumAttempts``
///   times; then the readers that need its bytes fail.
struct ResourceFetchStateMachine: Sendable {
    /// Tunables of the scheduling.
    struct Configuration: Hashable, Sendable {
        /// A reader always waits for an in-flight fetch whose next byte is at most this far behind
        /// its own position.
        var joinDistance: Int64 = 2 << 20
        /// Beyond ``joinDistance``, a reader still waits when the fetch, at its measured rate, will
        /// reach the reader's position within this time; otherwise it starts a fetch of its own.
        var joinWait: Duration = .milliseconds(500)
        /// The most fetches started ahead for one reader (for its next gaps).
        var fetchesAheadPerReader = 2
        /// The most fetches in flight for one resource.
        var maximumConcurrentFetches = 6
        /// The most bytes one disk read hands a reader.
        var maximumReadLength: Int64 = 512 << 10
        /// How many times the bytes of a failed fetch are asked for before its readers fail.
        var maximumAttempts = 3

        init() {}
    }

    /// One request to the origin.
    struct Fetch: Hashable, Sendable {
        /// The bytes asked for.
        var requested: ByteRange
        /// The next byte expected.
        var position: Int64
        /// Where the fetch stops: the requested end, or earlier once another fetch took over the rest.
        var end: Int64
        /// 1 for a first request, more for a resumption after failures.
        var attempt: Int
        /// The origin ignores Range: this fetch streams the whole representation from byte 0.
        var readsWhole = false
        /// When the first bytes arrived, and how many came after them (for the rate).
        var firstBytesAt: ContinuousClock.Instant?
        var bytesSinceFirst: Int64 = 0

        /// Bytes a second since the first bytes, once that is long enough to mean something.
        func rate(now: ContinuousClock.Instant) -> Double? {
            guard let firstBytesAt else { return nil }
            let elapsed = (now - firstBytesAt).seconds
            guard elapsed >= 0.05, bytesSinceFirst > 0 else { return nil }
            return Double(bytesSinceFirst) / elapsed
        }
    }

    /// One reader: the bytes it still wants, and whether it is waiting for some.
    struct Reader: Hashable, Sendable {
        var position: Int64
        var end: Int64
        var waiting = false
        /// Whether it was handed bytes: its client has seen the representation.
        var delivered = false
    }

    /// What a fetch's response says, judged against the cached representation by the coordinator.
    enum Response: Hashable, Sendable {
        /// 206 with `range` of a representation `completeLength` long.
        case partial(ByteRange, completeLength: Int64, sameRepresentation: Bool)
        /// 200 with the whole representation, `length` long: Range ignored, or If-Range failed.
        case whole(length: Int64, sameRepresentation: Bool)
        /// 416: nothing at the requested offset; the representation is `completeLength` long if told.
        case notSatisfiable(completeLength: Int64?)
    }

    /// The next thing a reader does.
    enum ReadStep: Hashable, Sendable {
        /// Read these bytes from the data file.
        case disk(ByteRange)
        /// Take these bytes from the chunk that just arrived.
        case received(ByteRange)
        /// Wait to be resumed: a fetch is bringing the bytes.
        case wait
        /// The reader's range is complete.
        case end
    }

    /// Why a reader fails.
    enum Failure: Hashable, Sendable {
        /// The origin now has another representation.
        case representationChanged
        /// The fetch bringing its bytes failed too often.
        case fetchFailed(FetchID)
        /// The resource was removed, or the cache is shutting down.
        case removed
    }

    /// What the owner must do.
    enum Action: Hashable, Sendable {
        /// Ask the origin for `range` (with If-Range), as fetch `id`.
        case startFetch(FetchID, ByteRange)
        /// Stop fetch `id`: nobody needs its bytes.
        case cancelFetch(FetchID)
        /// Resume a waiting reader with its next step.
        case resumeReader(ReaderID, ReadStep)
        /// Fail a reader (it is forgotten).
        case failReader(ReaderID, Failure)
        /// Drop every cached byte: the representation changed and is now `length` bytes long.
        case discardCachedBytes(length: Int64)
    }

    let configuration: Configuration
    /// The representation's length.
    private(set) var length: Int64
    /// The bytes on disk.
    private(set) var available: ByteRangeSet
    /// The fetches in flight (stopped fetches are removed at once).
    private(set) var fetches: [FetchID: Fetch] = [:]
    /// The readers.
    private(set) var readers: [ReaderID: Reader] = [:]
    /// Whether the origin was found to ignore Range.
    private(set) var rangesUnsupported = false
    private var nextFetchNumber = 1

    /// A resource of `length` bytes of which `available` are on disk.
    init(length: Int64, available: ByteRangeSet, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.length = length
        self.available = ByteRangeSet(available.intersection(ByteRange(0, length)))
    }

    /// Whether nothing is going on: no readers, no fetches.
    var isIdle: Bool { readers.isEmpty && fetches.isEmpty }

    // MARK: Readers

    /// A reader wants `range` (clipped to the resource).
    mutating func addReader(_ id: ReaderID, range: ByteRange, now: ContinuousClock.Instant) -> [Action] {
        let clipped = range.intersection(ByteRange(0, length)) ?? ByteRange(length, length)
        readers[id] = Reader(position: clipped.lowerBound, end: clipped.upperBound)
        return plan(now: now)
    }

    /// The reader has consumed everything before `position` and wants what follows: at most
    /// `maximumLength` bytes from disk (``Configuration/maximumReadLength`` when `nil`).
    mutating func read(
        _ id: ReaderID, at position: Int64, maximumLength: Int64? = nil, now: ContinuousClock.Instant
    ) -> (ReadStep, [Action]) {
        guard var reader = readers[id] else { return (.end, []) }
        reader.position = min(max(position, reader.position), reader.end)
        guard reader.position < reader.end else {
            reader.waiting = false
            readers[id] = reader
            return (.end, plan(now: now))
        }
        let contiguous = available.contiguousCount(from: reader.position)
        if contiguous > 0 {
            reader.waiting = false
            reader.delivered = true
            readers[id] = reader
            let limit = max(1, maximumLength ?? configuration.maximumReadLength)
            let upper = min(reader.end, reader.position + min(contiguous, limit))
            return (.disk(ByteRange(reader.position, upper)), plan(now: now))
        }
        reader.waiting = true
        readers[id] = reader
        return (.wait, plan(now: now))
    }

    /// The reader is gone (finished, or its client left): fetches only it needed stop.
    mutating func removeReader(_ id: ReaderID, now: ContinuousClock.Instant) -> [Action] {
        guard readers.removeValue(forKey: id) != nil else { return [] }
        return plan(now: now)
    }

    /// Fails every reader and stops every fetch (the resource is removed, or the cache stops).
    mutating func stopAll(_ failure: Failure) -> [Action] {
        var actions: [Action] = readers.keys.sorted().map { .failReader($0, failure) }
        actions += fetches.keys.sorted().map { .cancelFetch($0) }
        readers = [:]
        fetches = [:]
        return actions
    }

    // MARK: Fetches

    /// Takes over a request already answered (the first request for a resource, whose head told
    /// its length), delivering `range` from its next byte. `nil` when its bytes are already on disk
    /// or on their way; the owner then drops the response.
    mutating func adoptFetch(delivering range: ByteRange, readsWhole: Bool) -> FetchID? {
        guard let clipped = range.intersection(ByteRange(0, length)) else { return nil }
        if readsWhole { rangesUnsupported = true }
        let start = clipped.lowerBound
        guard !readsWhole || !fetches.values.contains(where: \.readsWhole) else { return nil }
        if !readsWhole {
            guard !available.contains(start), covering(start) == nil else { return nil }
        }
        var end = clipped.upperBound
        if !readsWhole {
            if let nextAvailable = available.ranges.first(where: { $0.lowerBound > start }) {
                end = min(end, nextAvailable.lowerBound)
            }
            if let nextFetch = fetches.values.map(\.position).filter({ $0 > start }).min() { end = min(end, nextFetch) }
        }
        let id = allocateFetchID()
        fetches[id] = Fetch(
            requested: clipped, position: start, end: end, attempt: 1, readsWhole: readsWhole)
        return id
    }

    /// The fetch whose request asked for `range`, if it is still wanted: the part of `count` bytes
    /// arriving next that it should keep (clipped where another fetch takes over), or `nil` when the
    /// fetch must stop.
    func usableRange(of id: FetchID, count: Int64) -> ByteRange? {
        guard let fetch = fetches[id], fetch.position < fetch.end else { return nil }
        return ByteRange(fetch.position, min(fetch.end, fetch.position + count))
    }

    /// A fetch's head arrived.
    mutating func fetchResponded(_ id: FetchID, _ response: Response, now: ContinuousClock.Instant) -> [Action] {
        guard var fetch = fetches[id] else { return [] }
        switch response {
        case .partial(let range, let completeLength, let sameRepresentation):
            guard sameRepresentation, completeLength == length else {
                return representationChanged(length: completeLength, survivor: id, now: now)
            }
            // The origin may send less than asked (RFC 9110 §14.2); the rest goes to another fetch.
            fetch.end = min(fetch.end, range.upperBound)
            fetch.requested = ByteRange(
                fetch.requested.lowerBound,
                max(fetch.requested.lowerBound, min(fetch.requested.upperBound, range.upperBound)))
            fetches[id] = fetch
            return plan(now: now)
        case .whole(let newLength, let sameRepresentation):
            guard sameRepresentation, newLength == length else {
                return representationChanged(length: newLength, survivor: id, survivorReadsWhole: true, now: now)
            }
            // The origin ignores Range: one stream from byte 0 brings everything; the others would
            // only bring the same bytes again.
            rangesUnsupported = true
            var actions: [Action] = []
            if fetches.contains(where: { $0.key != id && $0.value.readsWhole }) {
                fetches[id] = nil
                actions.append(.cancelFetch(id))
            } else {
                fetch.readsWhole = true
                fetch.requested = ByteRange(0, length)
                fetch.position = 0
                fetch.end = length
                fetches[id] = fetch
                for other in fetches.keys.sorted() where other != id {
                    fetches[other] = nil
                    actions.append(.cancelFetch(other))
                }
            }
            return actions + plan(now: now)
        case .notSatisfiable(let completeLength):
            if let completeLength, completeLength != length {
                fetches[id] = nil
                return [.cancelFetch(id)] + representationChanged(length: completeLength, survivor: nil, now: now)
            }
            fetches[id] = nil
            return [.cancelFetch(id)] + failReaders(needing: fetch, reason: .fetchFailed(id)) + plan(now: now)
        }
    }

    /// `range` of fetch `id` arrived (the range ``usableRange(of:count:)`` gave), and was written
    /// to disk when `stored`. Returns whether the fetch should go on reading.
    mutating func fetchReceived(
        _ id: FetchID, range: ByteRange, stored: Bool, now: ContinuousClock.Instant
    ) -> (keepReading: Bool, actions: [Action]) {
        guard var fetch = fetches[id], range.lowerBound == fetch.position, range.upperBound <= fetch.end else {
            return (false, [])
        }
        fetch.position = range.upperBound
        if fetch.firstBytesAt == nil { fetch.firstBytesAt = now } else { fetch.bytesSinceFirst += range.count }
        if stored { available.insert(range) }
        var actions: [Action] = []
        for readerID in readers.keys.sorted() {
            guard var reader = readers[readerID], reader.waiting, range.contains(reader.position) else { continue }
            reader.waiting = false
            reader.delivered = true
            readers[readerID] = reader
            actions.append(
                .resumeReader(readerID, .received(ByteRange(reader.position, min(range.upperBound, reader.end)))))
        }
        if fetch.position >= fetch.end {
            // Done. Reading on lets the response end cleanly (and its connection be reused) when
            // the request ended here too; a fetch cut short by another must stop now.
            fetches[id] = nil
            return (fetch.end == fetch.requested.upperBound, actions + plan(now: now))
        }
        fetches[id] = fetch
        // Bytes neither kept (no room) nor taken by a waiting reader are lost: going on would only
        // lose more; a reader that needs them starts a fetch when it gets there.
        guard isNeeded(fetch), stored || !actions.isEmpty else {
            fetches[id] = nil
            return (false, actions + plan(now: now))
        }
        return (true, actions)
    }

    /// The fetch ended: its response completed, or failed (`failed`), or it was stopped.
    mutating func fetchEnded(_ id: FetchID, failed: Bool, now: ContinuousClock.Instant) -> [Action] {
        guard let fetch = fetches.removeValue(forKey: id) else { return plan(now: now) }
        var actions: [Action] = []
        if failed && fetch.position < fetch.end && isNeeded(fetch) {
            if fetch.attempt < configuration.maximumAttempts {
                let retry = allocateFetchID()
                let range = fetch.readsWhole ? ByteRange(0, length) : ByteRange(fetch.position, fetch.end)
                var resumed = Fetch(
                    requested: range, position: range.lowerBound, end: range.upperBound, attempt: fetch.attempt + 1)
                resumed.readsWhole = fetch.readsWhole
                fetches[retry] = resumed
                actions.append(.startFetch(retry, range))
            } else {
                actions += failReaders(needing: fetch, reason: .fetchFailed(id))
            }
        }
        return actions + plan(now: now)
    }

    // MARK: Private

    private mutating func allocateFetchID() -> FetchID {
        defer { nextFetchNumber += 1 }
        return FetchID(nextFetchNumber)
    }

    /// The fetch that will bring the byte at `offset`.
    private func covering(_ offset: Int64) -> (FetchID, Fetch)? {
        fetches.sorted { $0.key < $1.key }.first { $0.value.position <= offset && offset < $0.value.end }
    }

    /// Whether some reader wants bytes the fetch has yet to bring.
    private func isNeeded(_ fetch: Fetch) -> Bool {
        guard fetch.position < fetch.end else { return false }
        let remaining = ByteRange(fetch.position, fetch.end)
        return readers.values.contains { reader in
            reader.position < reader.end && remaining.overlaps(ByteRange(reader.position, reader.end))
        }
    }

    /// Whether a reader at `offset` should start its own fetch rather than wait for `fetch`.
    private func shouldSplit(_ fetch: Fetch, at offset: Int64, now: ContinuousClock.Instant) -> Bool {
        guard !fetch.readsWhole else { return false }
        let distance = offset - fetch.position
        guard distance > configuration.joinDistance else { return false }
        if let rate = fetch.rate(now: now), Double(distance) / rate <= configuration.joinWait.seconds { return false }
        return true
    }

    /// Drops the cached bytes for a new representation of `newLength` bytes. Readers whose
    /// clients have seen the old one fail, and so do all when the length changed (their response
    /// heads announced the old length); the others wait for the new bytes. The fetch that showed
    /// the change (`survivor`) goes on if anyone needs it: a 200 streams the new representation
    /// from byte 0.
    private mutating func representationChanged(
        length newLength: Int64, survivor: FetchID?, survivorReadsWhole: Bool = false, now: ContinuousClock.Instant
    ) -> [Action] {
        var actions: [Action] = [.discardCachedBytes(length: newLength)]
        let lengthChanged = newLength != length
        length = newLength
        available = ByteRangeSet()
        rangesUnsupported = false
        for id in readers.keys.sorted() {
            guard let reader = readers[id] else { continue }
            if lengthChanged || reader.delivered {
                readers[id] = nil
                actions.append(.failReader(id, .representationChanged))
            }
        }
        for id in fetches.keys.sorted() where id != survivor {
            fetches[id] = nil
            actions.append(.cancelFetch(id))
        }
        if let survivor, var fetch = fetches[survivor] {
            if survivorReadsWhole {
                // The response is the whole new representation.
                fetch.readsWhole = true
                fetch.requested = ByteRange(0, length)
                fetch.position = 0
                fetch.end = length
            }
            fetch.end = min(fetch.end, length)
            fetches[survivor] = fetch
        }
        return actions + plan(now: now)
    }

    /// Fails the readers that want bytes the fetch was to bring and that are not on disk.
    private mutating func failReaders(needing fetch: Fetch, reason: Failure) -> [Action] {
        guard fetch.position < fetch.end else { return [] }
        let lost = ByteRange(fetch.position, fetch.end)
        var actions: [Action] = []
        for id in readers.keys.sorted() {
            guard let reader = readers[id], reader.position < reader.end,
                let wanted = lost.intersection(ByteRange(reader.position, reader.end)),
                !available.gaps(in: wanted).isEmpty
            else { continue }
            readers[id] = nil
            actions.append(.failReader(id, reason))
        }
        return actions
    }

    /// Starts the fetches readers need and stops those nobody needs.
    private mutating func plan(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        readers: for id in readers.keys.sorted() {
            guard let reader = readers[id], reader.position < reader.end else { continue }
            var serving = 0
            for gap in available.gaps(in: ByteRange(reader.position, reader.end)) {
                var start = gap.lowerBound
                while start < gap.upperBound {
                    guard serving < configuration.fetchesAheadPerReader else { continue readers }
                    if let (fetchID, fetch) = covering(start) {
                        if start == reader.position && shouldSplit(fetch, at: start, now: now) {
                            // A seek far ahead of the fetch: the older fetch stops where this one begins.
                            fetches[fetchID]?.end = start
                        } else {
                            serving += 1
                            start = fetch.end
                            continue
                        }
                    }
                    if rangesUnsupported {
                        // Only a stream from byte 0 can bring these bytes.
                        guard !fetches.values.contains(where: { $0.readsWhole && $0.position <= start }),
                            fetches.count < configuration.maximumConcurrentFetches
                        else { continue readers }
                        let id = allocateFetchID()
                        let whole = ByteRange(0, length)
                        fetches[id] = Fetch(requested: whole, position: 0, end: length, attempt: 1, readsWhole: true)
                        actions.append(.startFetch(id, whole))
                        continue readers
                    }
                    guard fetches.count < configuration.maximumConcurrentFetches else { break readers }
                    let nextFetch = fetches.values.map(\.position).filter { $0 > start && $0 < gap.upperBound }.min()
                    let range = ByteRange(start, nextFetch ?? gap.upperBound)
                    let fetchID = allocateFetchID()
                    fetches[fetchID] = Fetch(requested: range, position: start, end: range.upperBound, attempt: 1)
                    actions.append(.startFetch(fetchID, range))
                    serving += 1
                    start = range.upperBound
                }
            }
        }
        for id in fetches.keys.sorted() where !isNeeded(fetches[id]!) {
            fetches[id] = nil
            actions.append(.cancelFetch(id))
        }
        return actions
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
