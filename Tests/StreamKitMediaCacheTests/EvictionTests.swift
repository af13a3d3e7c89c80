import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitMediaCache
import StreamKitTestSupport
import Testing

/// The byte cap: least recently used first, never pinned or in-use entries, and resources larger
/// than the cap streamed without being kept.
@Suite(.requires(.nginx)) struct EvictionTests {
    let mib = 1 << 20

    private func storedEvents(_ events: [MediaCacheEvent]) -> [(unpinned: Int64, total: Int64)] {
        events.compactMap { event in
            if case .stored(_, _, let unpinned, let total) = event { return (unpinned, total) }
            return nil
        }
    }

    private func evicted(_ events: [MediaCacheEvent]) -> [String] {
        events.compactMap { event in
            if case .evicted(let key, _) = event { return key }
            return nil
        }
    }

    /// The bytes of the data files in `directory`, as the file system counts them.
    private func diskUsage(_ directory: String) throws -> Int64 {
        try FileManager.default.contentsOfDirectory(atPath: directory + "/data").reduce(0) { total, name in
            total
                + ((try FileManager.default.attributesOfItem(atPath: directory + "/data/" + name)[.size] as? Int64) ?? 0)
        }
    }

    /// Starts reading `url` and waits until the whole resource is cached; the entry stays in use
    /// while the returned iterator (holding the first chunk's successors) lives.
    private func holdInUse(
        _ cache: MediaCache, _ url: String
    ) async throws -> (MediaCacheBody.Iterator, [UInt8]) {
        var iterator = try await cache.read(url).body.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(await eventually { cache.entry(for: url)?.isComplete == true })
        return (iterator, first)
    }

    @Test func theCapHoldsAfterEveryWriteAndTheLeastRecentlyUsedGoesFirst() async throws {
        let origin = try await Origin.start()
        var contents: [String: [UInt8]] = [:]
        for name in ["a", "b", "c", "d"] {
            contents[name] = randomBytes(mib)
            try origin.write("\(name).ts", contents[name]!)
        }
        let limit = Int64(3 * mib)
        let cache = try makeCache(byteLimit: limit)
        let recorder = EventRecorder(cache)
        for name in ["a", "b", "c"] {
            _ = try await cache.bytes(origin.url("\(name).ts"))
            // Its fetch lets go of the entry after the reader has every byte, and that is its
            // last use: the next entry's uses come after it (a fetch of b released after c was
            // read made c the least recently used on a loaded machine).
            #expect(await eventually { cache.entry(for: origin.url("\(name).ts"))?.isInUse == false })
        }
        try await Task.sleep(for: .milliseconds(20))
        _ = try await cache.bytes(origin.url("a.ts"), ByteRange(0, 10))  // a is now more recent than b
        let (_, d) = try await cache.bytes(origin.url("d.ts"))
        #expect(d == contents["d"])
        #expect(
            await eventually { Set(cache.entries().map(\.key)) == Set(["a", "c", "d"].map { origin.url("\($0).ts") }) })
        #expect(cache.usage.unpinned <= limit)
        // Evicted files are unlinked in the background, off the request that needed the room.
        let directory = cache.configuration.directory
        #expect(await eventually { ((try? diskUsage(directory)) ?? .max) <= limit })
        await cache.shutdown()
        let events = await recorder.events
        let stored = storedEvents(events)
        #expect(stored.count > 0)
        for event in stored { #expect(event.unpinned <= limit, "after a write: \(event.unpinned) bytes") }
        #expect(evicted(events) == [origin.url("b.ts")])
        await origin.stop()
    }

    /// A lower cap set while the cache runs evicts at once, least recently used first, keeping
    /// pinned entries; a cap that is not positive is refused.
    @Test func aCapLoweredWhileRunningEvictsAtOnce() async throws {
        let origin = try await Origin.start()
        for name in ["a", "b", "c", "p"] { try origin.write("\(name).ts", randomBytes(mib)) }
        let cache = try makeCache(byteLimit: Int64(8 * mib))
        try cache.pin(origin.url("p.ts"))
        for name in ["a", "b", "c", "p"] {
            _ = try await cache.bytes(origin.url("\(name).ts"))
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(cache.usage.unpinned == Int64(3 * mib))
        try cache.setByteLimit(Int64(mib))
        #expect(cache.byteLimit == Int64(mib))
        #expect(cache.usage.unpinned <= Int64(mib))
        #expect(Set(cache.entries().map(\.key)) == Set(["c", "p"].map { origin.url("\($0).ts") }))
        #expect(throws: MediaCacheError.self) { try cache.setByteLimit(0) }
        await cache.shutdown()
        await origin.stop()
    }

    @Test func pinnedEntriesSurviveAndDoNotCountAgainstTheCap() async throws {
        let origin = try await Origin.start()
        for name in ["p", "b", "c", "d"] { try origin.write("\(name).ts", randomBytes(mib)) }
        let limit = Int64(2 * mib)
        let cache = try makeCache(byteLimit: limit)
        let recorder = EventRecorder(cache)
        let pinned = origin.url("p.ts")
        try cache.pin(pinned, owner: "download-42")
        _ = try await cache.bytes(pinned)
        for name in ["b", "c", "d"] { _ = try await cache.bytes(origin.url("\(name).ts")) }
        #expect(await eventually { cache.entry(for: pinned)?.isComplete == true })
        #expect(cache.entry(for: pinned)?.pinnedBy == ["download-42"])
        #expect(cache.usage.unpinned <= limit)
        #expect(cache.usage.total == cache.usage.unpinned + Int64(mib))
        // A second owner: the entry stays pinned until both let go.
        try cache.pin(pinned, owner: "user")
        #expect(cache.unpin(pinned, owner: "download-42"))
        #expect(cache.entry(for: pinned)?.isPinned == true)
        #expect(cache.unpinAll(owner: "user") == [pinned])
        // Unpinned, it counts against the cap again: something is evicted at once.
        #expect(cache.usage.unpinned <= limit)
        #expect(!cache.unpin(pinned, owner: "nobody"))
        await cache.shutdown()
        for event in storedEvents(await recorder.events) { #expect(event.unpinned <= limit) }
        await origin.stop()
    }

    @Test func anEntryInUseIsNotEvictedAndBytesThatDoNotFitStreamThrough() async throws {
        let origin = try await Origin.start()
        let a = randomBytes(mib)
        let b = randomBytes(mib / 2)
        try origin.write("a.ts", a)
        try origin.write("b.ts", b)
        let limit = Int64(mib)
        let cache = try makeCache(byteLimit: limit)
        let recorder = EventRecorder(cache)
        // A reader holds a: it has been fetched whole but is still being read.
        var (iterator, first) = try await holdInUse(cache, origin.url("a.ts"))
        // b does not fit next to a, and a may not go: b's bytes stream through, correct, unkept.
        let (_, bytesOfB) = try await cache.bytes(origin.url("b.ts"))
        #expect(bytesOfB == b)
        #expect(cache.entry(for: origin.url("b.ts"))?.cachedBytes == 0)
        var rest = first
        while let chunk = try await iterator.next() { rest += chunk }
        #expect(rest == a)
        await cache.shutdown()
        for event in storedEvents(await recorder.events) { #expect(event.unpinned <= limit) }
        #expect(evicted(await recorder.events).isEmpty)
        await origin.stop()
    }

    /// Room is taken as bytes arrive: a player that asks for the rest of a large file and stops
    /// after a few kilobytes must not have emptied the cache for it.
    @Test func aShortReadOfALargeResourceEvictsNothingItDidNotNeed() async throws {
        let origin = try await Origin.start()
        // b comes at 100 KB/s: its fetch would need room beyond a's only after 1.5 MiB, 15 s; it
        // is cancelled long before (at 400 KB/s, a full suite on two cores once held the
        // cancellation up that long). Reserving b's whole range at once evicted a at the start.
        let slowOrigin = try await Origin.start(limitRate: 100_000)
        let a = randomBytes(mib)
        try origin.write("a.ts", a)
        try slowOrigin.write("b.ts", randomBytes(3 * mib))
        let cache = try makeCache(byteLimit: Int64(3 * mib + mib / 2))
        let recorder = EventRecorder(cache)
        _ = try await cache.bytes(origin.url("a.ts"))
        #expect(await eventually { cache.entries().allSatisfy { !$0.isInUse } })
        do {
            let read = try await cache.read(slowOrigin.url("b.ts"), range: .from(first: 0))
            var received = 0
            for try await chunk in read.body {
                received += chunk.count
                if received >= 64 << 10 { break }
            }
        }  // the player closes its connection
        #expect(await eventually { cache.entries().allSatisfy { !$0.isInUse } })
        #expect(cache.entry(for: origin.url("a.ts"))?.cachedBytes == Int64(mib), "a is still cached")
        #expect(try await cache.bytes(origin.url("a.ts")).1 == a)
        await cache.shutdown()
        #expect(evicted(await recorder.events).isEmpty)
        await origin.stop()
        await slowOrigin.stop()
    }

    /// Room runs out in the middle of a body the client's I/O thread writes into the file: the
    /// bytes kept stay under the cap, the rest streams through, and the reader gets every byte.
    @Test func roomRunningOutMidBodyKeepsTheCapAndTheReaderGetsEveryByte() async throws {
        let origin = try await Origin.start()
        let a = randomBytes(mib)
        let b = randomBytes(3 * mib)
        try origin.write("a.ts", a)
        try origin.write("b.ts", b)
        let limit = Int64(3 * mib)
        let cache = try makeCache(byteLimit: limit)
        let recorder = EventRecorder(cache)
        // A reader holds a, so that only 2 MiB of room are left for b.
        var (iterator, first) = try await holdInUse(cache, origin.url("a.ts"))
        let (_, bytesOfB) = try await cache.bytes(origin.url("b.ts"))
        #expect(bytesOfB == b)
        let entryOfB = try #require(cache.entry(for: origin.url("b.ts")))
        let keptOfB = entryOfB.cachedBytes
        #expect(keptOfB <= 2 * Int64(mib), "\(keptOfB) bytes of b kept")
        // Bytes written past the room, never claimed, gave their blocks back.
        var status = stat()
        #expect(stat(cache.configuration.directory + "/data/" + (entryOfB.fileName ?? ""), &status) == 0)
        let allocated = Int64(status.st_blocks) * 512
        #expect(allocated <= keptOfB + 64 << 10, "\(allocated) bytes allocated for \(keptOfB) kept")
        #expect(cache.usage.unpinned <= limit)
        var rest = first
        while let chunk = try await iterator.next() { rest += chunk }
        #expect(rest == a)
        #expect(cache.entry(for: origin.url("a.ts"))?.cachedBytes == Int64(mib), "a was not evicted while in use")
        // What b kept is b's bytes: read again (a may now go), it comes from disk and the origin.
        #expect(try await cache.bytes(origin.url("b.ts")).1 == b)
        await cache.shutdown()
        for event in storedEvents(await recorder.events) { #expect(event.unpinned <= limit) }
        await origin.stop()
    }

    @Test func aFileTwiceTheCapStillPlaysWithoutBeingKept() async throws {
        let origin = try await Origin.start()
        let content = randomBytes(4 * mib)
        try origin.write("huge.mp4", content)
        let limit = Int64(2 * mib)
        let cache = try makeCache(byteLimit: limit)
        let recorder = EventRecorder(cache)
        let url = origin.url("huge.mp4")
        let (read, bytes) = try await cache.bytes(url)
        #expect(read.source == .passThrough)
        #expect(read.metadata?.length == Int64(4 * mib))
        #expect(bytes == content)
        let (ranged, part) = try await cache.bytes(url, ByteRange(Int64(3 * mib), Int64(3 * mib + 5000)))
        #expect(ranged.range == ByteRange(Int64(3 * mib), Int64(3 * mib + 5000)))
        #expect(part == Array(content[(3 * mib)..<(3 * mib + 5000)]))
        #expect(cache.entries().isEmpty)
        #expect(cache.usage.total == 0)
        await cache.shutdown()
        let events = await recorder.events
        #expect(events.contains(.passedThrough(url: url, length: Int64(4 * mib))))
        #expect(storedEvents(events).isEmpty)
        await origin.stop()
    }

    @Test func aPinnedResourceLargerThanTheCapIsKept() async throws {
        let origin = try await Origin.start()
        let content = randomBytes(3 * mib)
        try origin.write("keep.mp4", content)
        let cache = try makeCache(byteLimit: Int64(mib))
        let url = origin.url("keep.mp4")
        try cache.pin(url)
        #expect(try await cache.preload(url) == Int64(3 * mib))
        await origin.stop()
        let (read, bytes) = try await cache.bytes(url)
        #expect(read.source == .cache)
        #expect(bytes == content)
        await cache.shutdown()
    }

    @Test func removeOneClearAllAndListWithPercentages() async throws {
        let origin = try await Origin.start()
        try origin.write("x.ts", randomBytes(1000))
        try origin.write("y.ts", randomBytes(4000))
        let cache = try makeCache()
        _ = try await cache.bytes(origin.url("x.ts"))
        #expect(await eventually { cache.entries().allSatisfy { !$0.isInUse } })
        _ = try await cache.bytes(origin.url("y.ts"), ByteRange(0, 1000))
        #expect(await eventually { cache.entries().allSatisfy { !$0.isInUse } })
        let entries = cache.entries()
        #expect(entries.map(\.key) == [origin.url("y.ts"), origin.url("x.ts")], "most recent first")
        #expect(entries.map(\.cachedPercent) == [25, 100])
        let directory = cache.configuration.directory
        let file = directory + "/data/" + (entries[1].fileName ?? "")
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(await cache.remove(origin.url("x.ts")))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(!(await cache.remove(origin.url("x.ts"))))
        #expect(await cache.removeAll() == 1)
        #expect(cache.entries().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/data").isEmpty)
        await cache.shutdown()
        await origin.stop()
    }

    @Test func entriesAndTheirOrderSurviveARestart() async throws {
        let origin = try await Origin.start()
        let content = randomBytes(100_000)
        try origin.write("r.ts", content)
        let directory = try TestRun.makeTemporaryDirectory("restart")
        let cache = try makeCache(directory: directory)
        _ = try await cache.bytes(origin.url("r.ts"), ByteRange(0, 60_000))
        await cache.shutdown()
        await origin.stop()
        let reopened = try makeCache(directory: directory)
        let entry = try #require(reopened.entry(for: origin.url("r.ts")))
        #expect(reopened.repairs.isEmpty)
        #expect(entry.spans == ByteRangeSet([ByteRange(0, 60_000)]))
        #expect(entry.length == 100_000)
        let (read, bytes) = try await reopened.bytes(origin.url("r.ts"), ByteRange(1000, 50_000))
        #expect(read.source == .cache)
        #expect(bytes == Array(content[1000..<50_000]))
        await reopened.shutdown()
    }
}
