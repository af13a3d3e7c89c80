import StreamKitHTTP
import StreamKitHTTPServer
import StreamKitMediaCache
import Testing

@testable import StreamKitMediaServer

/// Who may use the proxy, judged on the request alone (no network: a server on a network address
/// is not started in tests).
@Suite struct ProxyRequestPolicyTests {
    private func request(from address: String, _ headers: HTTPHeaders = [:]) -> HTTPServerRequest {
        HTTPServerRequest(
            head: HTTPServerRequestHead(
                method: .get, target: "/proxy/file?url=http%3A%2F%2Fexample.com%2Fa", headers: headers),
            remoteAddress: address)
    }

    @Test func aServerOnANetworkAddressProxiesForThisMachineOnly() throws {
        let policy = ProxyRequestPolicy(allowedOrigins: [], loopbackClientsOnly: true)
        for address in ["127.0.0.1:5000", "127.3.4.5:1", "[::1]:5000", "[::ffff:127.0.0.1]:5000"] {
            #expect(try policy.target(of: request(from: address)) == "http://example.com/a", "\(address)")
        }
        for address in ["192.168.1.5:5000", "10.0.0.2:80", "[fe80::1]:5000", "[::ffff:192.168.1.5]:1", "unknown"] {
            #expect(throws: HTTPResponseError.self, "\(address)") { try policy.target(of: request(from: address)) }
        }
        // On loopback, anyone who can connect is this machine.
        let open = ProxyRequestPolicy(allowedOrigins: [])
        #expect(try open.target(of: request(from: "192.168.1.5:5000")) == "http://example.com/a")
    }

    /// Adding a task or inspecting a source makes the server fetch: on a server reachable from
    /// the network, for clients on this machine only, as the proxy.
    @Test func onlyThisMachineMakesTheServerFetchForTheQueue() throws {
        for address in ["127.0.0.1:5000", "[::1]:5000"] {
            try QueueRoutes.checkFetcher(request(from: address), thisMachineOnly: true)
        }
        for address in ["192.168.1.5:5000", "[fe80::1]:5000", "unknown"] {
            #expect(throws: HTTPResponseError.self, "\(address)") {
                try QueueRoutes.checkFetcher(request(from: address), thisMachineOnly: true)
            }
            try QueueRoutes.checkFetcher(request(from: address), thisMachineOnly: false)
        }
    }

    @Test func aRequestThisProcessesCacheMadeIsRefused() throws {
        let policy = ProxyRequestPolicy(allowedOrigins: [])
        let looped = request(from: "127.0.0.1:5000", ["Via": "1.0 other, 1.1 \(MediaCache.requestMark)"])
        #expect(throws: HTTPResponseError.self) { try policy.target(of: looped) }
        let other = request(from: "127.0.0.1:5000", ["Via": "1.1 streamkit-someoneelse"])
        #expect(try policy.target(of: other) == "http://example.com/a")
    }
}
