import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitMediaCache
import StreamKitTestSupport
import Testing

/// The index keeps each entry's last access, so that least-recently-used eviction survives a
/// restart.
@Suite(.requires(.nginx)) struct LastAccessTests {
    let mib = 1 << 20

    /// A read served from the cache claims no bytes, but its access time is saved: reopened with
    /// room for one entry, the cache keeps the one read last, not the one fetched last (found in
    /// an audit).
    @Test func theLastAccessOfACacheHitOutlivesTheProcess() async throws {
        let origin = try await Origin.start()
        try origin.write("x.ts", randomBytes(mib))
        try origin.write("y.ts", randomBytes(mib))
        let directory = try TestRun.makeTemporaryDirectory("last-access")
        let first = try makeCache(directory: directory)
        _ = try await first.bytes(origin.url("x.ts"))
        try await Task.sleep(for: .milliseconds(50))
        _ = try await first.bytes(origin.url("y.ts"))
        await first.shutdown()
        let x = origin.url("x.ts")
        let before = try #require(try MediaCache.entries(inDirectory: directory.path).first { $0.url == x }).lastAccess

        let second = try makeCache(directory: directory)
        try await Task.sleep(for: .milliseconds(100))
        let (read, _) = try await second.bytes(x)
        #expect(read.source == .cache)
        #expect(await eventually { second.entries().allSatisfy { !$0.isInUse } })
        await second.shutdown()
        let after = try #require(try MediaCache.entries(inDirectory: directory.path).first { $0.url == x }).lastAccess
        #expect(after > before, "in the index: \(after) vs \(before)")

        let third = try makeCache(byteLimit: Int64(mib + mib / 2), directory: directory)
        #expect(third.entry(for: x) != nil, "x, read last, is kept")
        #expect(third.entry(for: origin.url("y.ts")) == nil, "y, least recently used, is evicted")
        await third.shutdown()
        await origin.stop()
    }
}
