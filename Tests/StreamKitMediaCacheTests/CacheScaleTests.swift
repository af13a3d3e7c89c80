import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitMediaCache

/// The shape of the cache's costs over the size of its index (issue 26; bench/scale.sh measures
/// the curves at 10,000 and 100,000 entries): opening, and opening with an eviction of the same
/// number of entries, take at most four times as long over ten times the entries. Opening read
/// and checked every entry, and eviction scanned every entry for each victim: both were ten times.
///
/// One test at a time, each the quickest of several runs in turns, in the opening thread's CPU
/// time: a measurement of milliseconds.
@Suite(.serialized) struct CacheScaleTests {
    /// A cache whose index has `count` entries of 1,000 claimed bytes in ten spans, used in the
    /// order of their numbers, and no data files (opening reads none).
    static func cacheDirectory(entries count: Int) async throws -> String {
        let directory = try TestRun.makeTemporaryDirectory("cache-scale-\(count)")
        await (try makeCache(directory: directory)).shutdown()
        let index = try SQLiteDatabase(path: directory.path + "/index.sqlite")
        let spans = "[" + stride(from: 0, to: 2000, by: 200).map { "[\($0),\($0 + 100)]" }.joined(separator: ",") + "]"
        try index.transaction {
            for number in 0..<count {
                let url = "http://127.0.0.1:9/f\(number).ts"
                try index.query(
                    """
                    INSERT INTO resources(key, hash, url, file_name, content_length, mime_type, spans, cached_bytes,
                        last_access, created) VALUES (?, ?, ?, ?, 2000, 'video/mp2t', ?, 1000, ?, ?)
                    """,
                    [
                        .text(url), .text(String(number, radix: 16)), .text(url), .text("f\(number).ts"), .text(spans),
                        .real(1_796_231_444 + Double(number)), .real(1_796_231_444),
                    ])
            }
        }
        return directory.path
    }

    /// The CPU time this thread has used, in seconds: what other tests running at once do not
    /// add to (the wall clock of a millisecond's work under a full test run varied fourfold).
    static func threadCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// The quickest of `rounds` timings of `small` and of `large`, taken in turns, so that both
    /// meet the same moments of the machine's load.
    static func quickest(
        _ rounds: Int, small: () async throws -> Double, large: () async throws -> Double
    ) async rethrows -> (small: Double, large: Double) {
        var best = (small: Double.infinity, large: Double.infinity)
        for _ in 0..<rounds {
            best.small = min(best.small, try await small())
            best.large = min(best.large, try await large())
        }
        return best
    }

    /// Opens the cache in `directory` with a cap `evicting` entries under its usage (none: no cap
    /// to speak of), returning the CPU seconds the opening took (it runs on the calling thread).
    static func open(_ directory: String, evicting victims: Int = 0) async throws -> Double {
        var limit = Int64(1) << 50
        if victims > 0 {
            let index = try SQLiteDatabase(path: directory + "/index.sqlite")
            let usage = try #require(
                try index.query("SELECT SUM(cached_bytes) AS bytes FROM resources").first?.integer("bytes"))
            limit = usage - Int64(victims) * 1000
        }
        let began = threadCPUTime()
        let cache = try makeCache(byteLimit: limit, directory: URL(fileURLWithPath: directory)) {
            $0.strayFileSweepDelay = nil
        }
        let took = threadCPUTime() - began
        if victims > 0 { #expect(cache.usage.unpinned == limit) }
        await cache.shutdown()
        return took
    }

    @Test func openingAndEvictingDoNotGrowWithTheIndex() async throws {
        let small = try await Self.cacheDirectory(entries: 2_000)
        let large = try await Self.cacheDirectory(entries: 20_000)
        let (openSmall, openLarge) = try await Self.quickest(
            7, small: { try await Self.open(small) }, large: { try await Self.open(large) })
        print("cache open, CPU s: 2,000 entries \(openSmall), 20,000 entries \(openLarge)")
        #expect(openLarge <= 4 * openSmall, "open: \(openSmall) s at 2,000 entries, \(openLarge) s at 20,000")
        let (evictSmall, evictLarge) = try await Self.quickest(
            7, small: { try await Self.open(small, evicting: 100) },
            large: { try await Self.open(large, evicting: 100) })
        print("cache open evicting 100, CPU s: 2,000 entries \(evictSmall), 20,000 entries \(evictLarge)")
        #expect(
            evictLarge <= 4 * evictSmall,
            "open evicting 100 entries: \(evictSmall) s at 2,000 entries, \(evictLarge) s at 20,000")
    }
}
