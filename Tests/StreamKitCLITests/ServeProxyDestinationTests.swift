import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc

/// `streamkit serve`'s proxy and its destination policy, through the built binary: a refused
/// destination, directly or after a redirect, answers 403 naming the rule and the host. (That
/// no connection is attempted is checked in the transports, with a recording connect hook.)
@Suite struct ServeProxyDestinationTests {
    private func get(_ port: UInt16, _ target: String) async throws -> RawHTTPResponse {
        try await runBlocking {
            let connection = try RawHTTPConnection(port: port)
            try connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            return try connection.readResponse()
        }
    }

    private func proxied(_ route: String, _ url: String) -> String {
        "/proxy/\(route)?url=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    private func stop(_ server: ServeProcess) async throws {
        server.process.signal(SIGINT)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
    }

    @Test func refusedDestinationsAnswer403NamingTheRuleAndTheHost() async throws {
        let origin = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                "HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/latest/meta-data/\r\nContent-Length: 0\r\n"
                    + "Connection: close\r\n\r\n"),
            .close,
        ])
        let server = try await ServeProcess.start(arguments: ["--port", "0", "--proxy-deny", "10.0.0.0/8"])
        let metadata =
            "refused to connect to 169.254.169.254 for host 169.254.169.254: 169.254.169.254 (cloud metadata)"
        let table: [(route: String, url: String, expected: [String])] = [
            ("file", "http://169.254.169.254/latest/meta-data/", [metadata]),
            ("file", origin.url("start").absoluteString, [metadata]),
            ("file", "http://167772161/", ["refused to connect to 10.0.0.1 for host ", ": 10.0.0.0/8 (--proxy-deny)"]),
            (
                "hls", "http://[fe80::1]/index.m3u8",
                ["refused to connect to fe80::1 for host ", ": fe80::/10 (link-local)"]
            ),
        ]
        for (route, url, expected) in table {
            let response = try await get(server.port, proxied(route, url))
            #expect(response.status == 403, "\(url): \(response.text)")
            for fragment in expected { #expect(response.text.contains(fragment), "\(url): \(response.text)") }
        }
        try await stop(server)
        await origin.stop()
    }

    @Test func anAllowListRefusesLoopbackOutsideItWhereTheDefaultServesIt() async throws {
        let origin = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"), .close,
        ])
        let url = origin.url("a.bin").absoluteString

        let open = try await ServeProcess.start(arguments: ["--port", "0"])
        let served = try await get(open.port, proxied("file", url))
        #expect(served.status == 200, "\(served.text)")
        #expect(served.text == "ok")
        try await stop(open)

        let narrowed = try await ServeProcess.start(
            arguments: ["--port", "0", "--proxy-allow", "192.168.0.0/16,fd00::/8", "--proxy-allow", "10.1.0.0/16"])
        let refused = try await get(narrowed.port, proxied("file", origin.url("b.bin").absoluteString))
        #expect(refused.status == 403)
        #expect(refused.text.contains("127.0.0.0/8 (loopback), not in --proxy-allow"), "\(refused.text)")
        try await stop(narrowed)
        await origin.stop()
    }

    @Test(arguments: [
        (["--proxy-allow", "10.0.0.0/33"], "invalid value '10.0.0.0/33' for --proxy-allow"),
        (["--proxy-deny", "10.0.0.0/8,example.com"], "invalid value '10.0.0.0/8,example.com' for --proxy-deny"),
        (["--proxy-deny", "167772161"], "invalid value '167772161' for --proxy-deny"),
    ])
    func badRangesAreUsageErrors(arguments: [String], message: String) async {
        let home = (try? TestRun.makeTemporaryDirectory("serve-home").path) ?? "/nonexistent"
        let (code, _, error) = await CommandRunner.runCapturing(
            arguments: ["serve"] + arguments, environment: ["STREAMKIT_HOME": home])
        #expect(code == .usage)
        #expect(error.hasPrefix("error: \(message): expected address ranges such as"), "\(error)")
    }
}
#endif
