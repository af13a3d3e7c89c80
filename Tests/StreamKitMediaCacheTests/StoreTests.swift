import Foundation
import StreamKitCore
import StreamKitMediaCache
import StreamKitTestSupport
import Testing

@testable import StreamKitMediaCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The index and the data files: naming, keys, the schema, and the repair at first use of entries
/// whose files hold less than the index claims.
@Suite struct StoreTests {
    @Test(
        arguments: [
            ("https://cdn.example/v/seg001.ts?token=1", nil, "ts"),
            ("https://cdn.example/v/movie.MP4", "video/mp4", "mp4"),
            ("https://cdn.example/stream.php?id=3", "video/mp2t", "ts"),
            ("https://cdn.example/stream.php?id=3", nil, "bin"),
            ("https://cdn.example/master", "application/vnd.apple.mpegURL", "m3u8"),
            ("https://cdn.example/a.b/c", "audio/mpeg; charset=x", "mp3"),
            ("https://cdn.example/x.exe", nil, "bin"),
        ] as [(String, String?, String)])
    func dataFilesAreNamedByTheKeysHashWithTheMediaExtension(url: String, mime: String?, ext: String) {
        let hash = CacheFileNaming.hash(ofKey: url)
        #expect(hash.count == 32)
        #expect(hash.allSatisfy { $0.isHexDigit })
        #expect(CacheFileNaming.fileName(hash: hash, url: url, mimeType: mime) == hash + "." + ext)
    }

    @Test func keyFunctionsDropSigningParametersAndKeepTheRest() {
        let keys = MediaCacheKeyFunction.signedURLs
        #expect(
            keys.key(for: "https://cdn.example/a.mp4?quality=hd&Expires=1&Signature=abc&Key-Pair-Id=K&lang=en#t=3")
                == "https://cdn.example/a.mp4?quality=hd&lang=en")
        #expect(keys.key(for: "https://cdn.example/a.mp4?token=x") == "https://cdn.example/a.mp4")
        #expect(keys.key(for: "https://cdn.example/a.mp4") == "https://cdn.example/a.mp4")
        #expect(
            MediaCacheKeyFunction.ignoringQueryParameters(["sid"]).key(for: "http://h/a?sid=1&x=2&%73id=3")
                == "http://h/a?x=2")
        #expect(MediaCacheKeyFunction.url.key(for: "http://h/a?token=1") == "http://h/a?token=1")
        let custom = MediaCacheKeyFunction { $0.replacingOccurrences(of: "cdn1.", with: "cdn.") }
        #expect(custom.key(for: "http://cdn1.example/a") == "http://cdn.example/a")
    }

    @Test func spansAreStoredAsARangeSetNotABitmap() {
        let spans = ByteRangeSet([ByteRange(0, 100), ByteRange(4096, 1 << 40)])
        let text = CacheIndex.encodeSpans(spans)
        #expect(text == "[[0,100],[4096,1099511627776]]")
        #expect(CacheIndex.decodeSpans(text) == spans)
        #expect(CacheIndex.decodeSpans("[[5,1],garbage") == ByteRangeSet())
        #expect(CacheIndex.decodeSpans("[[200,300],[0,250]]") == ByteRangeSet([ByteRange(0, 300)]))
        #expect(CacheIndex.decodeSpans("[]") == ByteRangeSet())
        #expect(CacheIndex.decodeSpans("[ [0, 10] , [20,30] ]") == ByteRangeSet([ByteRange(0, 10), ByteRange(20, 30)]))
        // Damage claims nothing: a stray element, a sign, a bound past 18 digits, trailing bytes.
        for damaged in [
            "[[0,10,20]]", "[[-1,10]]", "[[0,1234567890123456789]]", "[[0,10]]x", "[[0,10]", "", "[[0,10],]",
        ] {
            #expect(CacheIndex.decodeSpans(damaged) == ByteRangeSet(), "\(damaged)")
        }
    }

    @Test func bytesPresentDropsWhatIsPastTheEndOrInAHole() throws {
        let directory = try TestRun.makeTemporaryDirectory("holes")
        let path = directory.appendingPathComponent("f").path
        let descriptor = open(path, O_RDWR | O_CREAT, 0o644)
        defer { close(descriptor) }
        let block = [UInt8](repeating: 7, count: 1 << 16)
        try DataFile.write(block[...], to: descriptor, at: 0)
        // A hole of 4 MiB, then data again.
        try DataFile.write(block[...], to: descriptor, at: 4 << 20)
        let end = Int64(4 << 20) + Int64(1 << 16)
        let claimed = ByteRangeSet([ByteRange(0, end + 1000)])
        let present = CacheStore.bytesPresent(claimed: claimed, path: path)
        #expect(present.contains(ByteRange(0, 1 << 16)))
        #expect(present.contains(ByteRange(4 << 20, end)))
        #expect(!present.contains(2 << 20), "the middle of the hole is not claimed")
        #expect(!present.contains(end), "nothing past the end")
        #expect(CacheStore.bytesPresent(claimed: claimed, path: path + "-missing").isEmpty)
    }

    @Test(.requires(.nginx)) func entriesWhoseFilesHoldLessThanClaimedAreRepairedAtFirstUse() async throws {
        let origin = try await Origin.start()
        let content = randomBytes(1 << 20)
        try origin.write("t.ts", content)
        try origin.write("h.ts", content)
        let directory = try TestRun.makeTemporaryDirectory("repair")
        let cache = try makeCache(directory: directory)
        _ = try await cache.bytes(origin.url("t.ts"))
        _ = try await cache.bytes(origin.url("h.ts"))
        let truncatedFile = try #require(cache.entry(for: origin.url("t.ts"))?.fileName)
        let holedFile = try #require(cache.entry(for: origin.url("h.ts"))?.fileName)
        await cache.shutdown()

        // Behind the index's back: one file loses its tail, the other becomes all hole, and a
        // stray file appears.
        let data = directory.appendingPathComponent("data")
        #expect(truncate(data.appendingPathComponent(truncatedFile).path, 300_000) == 0)
        #expect(truncate(data.appendingPathComponent(holedFile).path, 0) == 0)
        #expect(truncate(data.appendingPathComponent(holedFile).path, 1 << 20) == 0)
        try Data([1, 2, 3]).write(to: data.appendingPathComponent("stray.bin"))

        let reopened = try makeCache(directory: directory) { $0.strayFileSweepDelay = .zero }
        // The usage counts what the index claims until an entry is loaded and its file checked.
        #expect(reopened.usage.total == Int64(2 << 20))
        #expect(reopened.repairs.isEmpty, "nothing is read at open")
        #expect(reopened.entry(for: origin.url("t.ts"))?.spans == ByteRangeSet([ByteRange(0, 300_000)]))
        #expect(reopened.entry(for: origin.url("h.ts"))?.cachedBytes == 0)
        let repairs = Dictionary(uniqueKeysWithValues: reopened.repairs.map { ($0.key, $0.droppedBytes) })
        #expect(repairs[origin.url("t.ts")] == Int64(1 << 20) - 300_000)
        #expect(repairs[origin.url("h.ts")] == Int64(1 << 20))
        #expect(reopened.usage.total == 300_000)
        #expect(
            await eventually { !FileManager.default.fileExists(atPath: data.appendingPathComponent("stray.bin").path) })
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent(truncatedFile).path))
        // Reading again fetches exactly what was lost.
        let (_, bytes) = try await reopened.bytes(origin.url("t.ts"))
        #expect(bytes == content)
        #expect(try await origin.fetchedRanges("t.ts").last?.range == ByteRange(300_000, Int64(1 << 20)))
        await reopened.shutdown()
        await origin.stop()
    }
}

extension StoreTests {
    /// A CLI command creating a cache while a library reader lists it: both found an index file
    /// with no schema, and the second's DROP TABLE met the first's CREATE TABLE ("table pins
    /// already exists"), so that the command exited. Readers racing on new indexes now all see
    /// one schema and an empty list.
    @Test func readersOpeningANewIndexAtOnceAllSucceed() async throws {
        for round in 0..<30 {
            let directory = try TestRun.makeTemporaryDirectory("index-race-\(round)").path
            // An empty file: the state between a process creating it and writing the schema.
            #expect(FileManager.default.createFile(atPath: directory + "/index.sqlite", contents: nil))
            let results = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await runBlocking {
                            do {
                                return try MediaCache.entries(inDirectory: directory).isEmpty ? nil : "entries"
                            } catch {
                                return "\(error)"
                            }
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
            }
            #expect(results.isEmpty, "round \(round): \(results)")
        }
    }
}

extension StoreTests {
    /// An index written by schema 1 (no totals, no indexes) keeps its entries: the tables gain
    /// what schema 2 adds in place, the totals counted once, then kept by the triggers.
    @Test func aSchemaOneIndexKeepsItsEntries() async throws {
        let directory = try TestRun.makeTemporaryDirectory("schema-1")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let old = try SQLiteDatabase(path: directory.path + "/index.sqlite")
        try old.execute(
            """
            CREATE TABLE resources (
                key TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, url TEXT NOT NULL, final_url TEXT,
                file_name TEXT, content_length INTEGER, mime_type TEXT, entity_tag TEXT, last_modified REAL,
                if_range TEXT, spans TEXT NOT NULL DEFAULT '[]', cached_bytes INTEGER NOT NULL DEFAULT 0,
                last_access REAL NOT NULL, created REAL NOT NULL);
            CREATE TABLE pins (
                key TEXT NOT NULL REFERENCES resources(key) ON DELETE CASCADE, owner TEXT NOT NULL,
                PRIMARY KEY (key, owner));
            INSERT INTO resources (key, hash, url, file_name, content_length, spans, cached_bytes, last_access, created)
                VALUES ('http://a.example/a.ts', 'aa', 'http://a.example/a.ts', 'a.ts', 500, '[[0,300]]', 300, 2, 1),
                       ('http://a.example/b.ts', 'bb', 'http://a.example/b.ts', 'b.ts', 100, '[[0,100]]', 100, 1, 1);
            INSERT INTO pins VALUES ('http://a.example/b.ts', 'user');
            PRAGMA user_version = 1;
            """)
        let listing = try MediaCache.listing(inDirectory: directory.path, limit: 1)
        #expect(listing.entries.map(\.url) == ["http://a.example/a.ts"])
        #expect(listing.entryCount == 2)
        #expect(listing.cachedBytes == 400)
        // Opened: the usage from the totals; changes kept in them.
        let cache = try makeCache(directory: directory) { $0.strayFileSweepDelay = nil }
        #expect(cache.usage.unpinned == 300)
        #expect(cache.usage.total == 400)
        #expect(await cache.remove("http://a.example/a.ts"))
        #expect(cache.usage.total == 100)
        await cache.shutdown()
        let after = try MediaCache.listing(inDirectory: directory.path, limit: nil)
        #expect(after.entryCount == 1)
        #expect(after.cachedBytes == 100)
        #expect(after.entries.first?.pinnedBy == ["user"])
    }
}
