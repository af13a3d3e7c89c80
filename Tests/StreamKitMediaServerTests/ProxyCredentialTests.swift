import Foundation
import StreamKitHLS
import StreamKitMediaCache
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxy refuses URLs with `user:password@` (docs/CLI.md, "The home"): the cache index records
/// URLs, so the password would be stored in clear.
@Suite(.requires(.nginx)) struct ProxyCredentialTests {
    @Test func aURLWithCredentialsIsRefusedAndNeverStored() async throws {
        let proxy = try await ProxySetup.start()
        try Data(randomBytes(50_000)).write(to: proxy.originRoot.appendingPathComponent("a.bin"))
        try Data("#EXTM3U\n#EXT-X-ENDLIST\n".utf8).write(to: proxy.originRoot.appendingPathComponent("a.m3u8"))
        let secret = "s3cretPW"
        let host = "127.0.0.1:\(proxy.nginx.port)"
        for url in [
            "http://user:\(secret)@\(host)/a.bin", "http://\(secret)@\(host)/a.bin",
            "http:user:\(secret)@\(host)/a.bin", "http:\\\\user:\(secret)@\(host)/a.bin",
        ] {
            let encoded = HLSProxyRewriter.percentEncoded(url)
            let file = try await proxy.request("/proxy/file?url=\(encoded)")
            #expect(file.status == 400, "\(url)")
            #expect(String(decoding: file.body, as: UTF8.self).contains("credentials"), "\(url)")
            let playlistURL = HLSProxyRewriter.percentEncoded(url.replacingOccurrences(of: ".bin", with: ".m3u8"))
            let playlist = try await proxy.request("/proxy/hls?url=\(playlistURL)")
            #expect(playlist.status == 400, "\(url)")
        }
        #expect(try await proxy.nginx.settledAccessLog().isEmpty, "refused requests never reached the origin")
        // The same URL without credentials is cached: the index holds its URL, and not the password.
        #expect(try await proxy.request(proxy.filePath("a.bin")).status == 200)
        let directory = proxy.cache.configuration.directory
        await proxy.stop()
        let index = ["", "-wal", "-shm"]
            .compactMap { FileManager.default.contents(atPath: directory + "/index.sqlite" + $0) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(index.contains("/a.bin"))
        #expect(!index.contains(secret))
    }
}
