import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitMediaCache
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

/// A cached file sent straight from its data file (`sendfile`) is in use while it is sent.
@Suite(.requires(.nginx)) struct ProxyHitLeaseTests {
    /// "In-use resources are never evicted": a player playing a cached file through /proxy/file
    /// is using it; caching something else meanwhile does not evict it (found in an audit: the
    /// `sendfile` path held no lease, and the entry went while it was played).
    @Test func aFileBeingPlayedFromDiskIsNotEvicted() async throws {
        let mib = 1 << 20
        let proxy = try await ProxySetup.start(byteLimit: Int64(12 * mib))
        let a = randomBytes(8 * mib)
        try Data(a).write(to: proxy.originRoot.appendingPathComponent("a.ts"))
        try Data(randomBytes(6 * mib)).write(to: proxy.originRoot.appendingPathComponent("b.ts"))
        let aURL = proxy.originURL("a.ts")
        #expect(try await proxy.request(proxy.filePath("a.ts")).body == a)
        #expect(
            await eventually {
                proxy.cache.entry(for: aURL).map { $0.isComplete && !$0.isInUse } ?? false
            })

        // The player: a request for a, read slowly (its response stays open).
        let port = proxy.port
        let connection = try RawHTTPConnection(port: port, receiveBufferSize: 16 << 10)
        try connection.send("GET \(proxy.filePath("a.ts")) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        let head = String(decoding: try await runBlocking { try connection.readSome(2048) }, as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200") && head.lowercased().contains("x-streamkit-cache: hit"), "\(head)")
        #expect(proxy.cache.entry(for: aURL)?.isInUse == true, "a is in use while it is played")

        // Meanwhile b is played: it would need a's room.
        #expect(try await proxy.request(proxy.filePath("b.ts")).status == 200)
        #expect(proxy.cache.entry(for: aURL) != nil, "a, being played, was evicted")

        // Once the player goes away (a reset, as a closed socket with unread bytes sends), a is
        // no longer in use.
        connection.reset()
        #expect(await eventually { proxy.cache.entry(for: aURL).map { !$0.isInUse } ?? true })
        await proxy.stop()
    }
}
