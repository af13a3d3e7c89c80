import Foundation
import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitTestSupport
import Testing

@testable import StreamKitMediaServer

/// Which requests a page of another site sends, judged on their headers alone; then the proxy and
/// `/api/` refusing them over real sockets.
@Suite struct CrossSiteCheckTests {
    static let check = CrossSiteCheck(allowedOrigins: ["http://Player.example"])

    /// Headers (besides `Host: 127.0.0.1:12345`) and whether they are refused.
    @Test(
        arguments: [
            ([:], false),  // a player, curl, ffmpeg
            (["Origin": "http://evil.example"], true),
            (["Origin": "null"], true),  // a sandboxed page, a file:// page
            (["Origin": "http://127.0.0.1:12345"], false),  // the server's own page
            (["Origin": "http://player.example"], false),  // --allow-origin
            (["Sec-Fetch-Site": "cross-site"], true),
            (["Sec-Fetch-Site": "same-site"], true),  // another port of this machine is the same site
            (["Sec-Fetch-Site": "same-origin"], false),
            (["Sec-Fetch-Site": "none"], false),  // typed in the address bar
            (["Origin": "http://player.example", "Sec-Fetch-Site": "cross-site"], false),
            (["Referer": "https://evil.example/x"], true),  // <img>, <video> of a browser without fetch metadata
            (["Referer": "http://127.0.0.1:8080/page.html"], true),  // another port
            (["Referer": "http://127.0.0.1:12345/"], false),
            (["Referer": "HTTP://127.0.0.1:12345/library/a/index.html?x"], false),
            (["Referer": "http://player.example:80/app"], false),  // the default port is no port
            (["Referer": "http://127.0.0.1:12345@evil.example/"], true),
            (["Referer": "about:client"], true),
            (["Referer": "garbage"], true),
        ] as [([String: String], Bool)])
    func aPageOfAnotherSiteIsRefused(headers: [String: String], refused: Bool) {
        var all = headers
        all["Host"] = "127.0.0.1:12345"
        let reason = Self.check.refusal { name in all.first { $0.key.lowercased() == name.lowercased() }?.value }
        #expect((reason != nil) == refused, "\(headers): \(reason ?? "allowed")")
    }

    @Test(
        arguments: [
            ("http://a.example/x", "http://a.example"), ("https://a.example:443/", "https://a.example"),
            ("https://a.example:8443", "https://a.example:8443"), ("http://a.example\\@b.example/", "http://a.example"),
            ("ftp://a.example/", nil), ("http:///x", nil), ("http://u:p@a.example/", nil),
        ] as [(String, String?)])
    func theOriginOfAURL(url: String, origin: String?) {
        #expect(CrossSiteCheck.origin(of: url) == origin)
    }

    @Test(.requires(.nginx)) func theProxyAndTheQueueRefuseOtherSitesAndBackslashURLs() async throws {
        let proxy = try await ProxySetup.start()
        try Data(count: 1000).write(to: proxy.originRoot.appendingPathComponent("a.ts"))
        let target = proxy.filePath("a.ts")
        let own = "http://127.0.0.1:\(proxy.port)"
        let foreign = try await proxy.request(target, "Referer: https://evil.example/x\r\n")
        #expect(foreign.status == 403 && foreign.text.contains("other sites (Referer)"), "\(foreign.text)")
        #expect(try await proxy.request(target, "Referer: \(own)/\r\n").status == 200)
        #expect(try await proxy.request(target, "Origin: \(own)\r\n").status == 200)
        for fields in [
            "Referer: https://evil.example/x\r\n", "Origin: http://evil.example\r\n", "Sec-Fetch-Site: cross-site\r\n",
        ] {
            #expect(try await proxy.request("/api/tasks", fields).status == 403, "\(fields)")
        }
        #expect(try await proxy.request("/api/tasks", "Referer: \(own)/\r\n").status == 200)
        #expect(try await proxy.request("/api/tasks").status == 200)
        // Browsers send http://host-a\@host-b/ to host-a; libcurl would go to host-b.
        let backslash = "http://127.0.0.1:1\\@127.0.0.1:\(proxy.nginx.port)/a.ts"
        let refused = try await proxy.request("/proxy/file?url=\(HLSProxyRewriter.percentEncoded(backslash))")
        #expect(refused.status == 400 && refused.text.contains("backslash"), "\(refused.text)")
        // One fetch for the two allowed requests (the second a cache hit); none for the refused ones.
        #expect(try await proxy.nginx.settledAccessLog().map(\.uri) == ["/a.ts"])
        await proxy.stop()
    }
}
