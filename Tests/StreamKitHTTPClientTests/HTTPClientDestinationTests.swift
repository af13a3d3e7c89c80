import Foundation
import StreamKitHTTP
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitHTTPClient

#if canImport(Glibc)
/// The destination policy in the transports: every address a connection would be made to goes
/// through the connect hook, which records it and lets only loopback through, so that a broken
/// policy shows as a recorded outside address and still connects nowhere outside.
@Suite struct HTTPClientDestinationTests {
    /// The addresses the transports were about to connect to.
    private final class ConnectRecorder: Sendable {
        private let addresses = Mutex<[String]>([])
        var recorded: [String] { addresses.withLock { $0 } }

        func hook(_ address: IPAddress) -> Bool {
            addresses.withLock { $0.append("\(address)") }
            return address == IPAddress("127.0.0.1")!
        }
    }

    private func client(
        _ recorder: ConnectRecorder, policy: DestinationPolicy? = DestinationPolicy()
    ) throws
        -> HTTPClient
    {
        var configuration = HTTPClientConfiguration(
            timeouts: HTTPClientTimeouts(connect: .seconds(5), idle: .seconds(10)), proxy: .none, environment: [:])
        configuration.destinationPolicy = policy
        configuration.connectHook = { recorder.hook($0) }
        return try HTTPClient(configuration: configuration)
    }

    /// An origin on loopback answering every request with a redirect to `location`.
    private func redirecting(to location: String) throws -> ScriptedTCPResponder {
        try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send("HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            .close,
        ])
    }

    private func refusal(_ client: HTTPClient, _ request: HTTPClientRequest) async -> HTTPClientError? {
        do {
            _ = try await client.execute(request, retry: HTTPClientRetryPolicy(maximumAttempts: 3))
            return nil
        } catch {
            return error as? HTTPClientError
        }
    }

    @Test(arguments: [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "169.254.169.254 (cloud metadata)"),
        ("http://[fe80::1]/", "fe80::1", "fe80::/10 (link-local)"),
        ("http://167772161/", "10.0.0.1", "10.0.0.0/8 (--proxy-deny)"),
        ("http://[::ffff:169.254.169.254]:8080/x", "::ffff:169.254.169.254", "169.254.169.254 (cloud metadata)"),
        ("http://0x0a.0.0.1/", "10.0.0.1", "10.0.0.0/8 (--proxy-deny)"),
    ])
    func aRedirectToARefusedAddressIsNotConnectedToOverLibcurl(
        location: String, address: String, rule: String
    )
        async throws
    {
        let origin = try redirecting(to: location)
        let recorder = ConnectRecorder()
        let client = try client(recorder, policy: DestinationPolicy(deniedRanges: [IPAddressRange("10.0.0.0/8")!]))
        let error = try #require(await refusal(client, HTTPClientRequest(url: origin.url("start").absoluteString)))
        #expect(error.kind == .destinationRefused, "\(error)")
        #expect(error.detail.hasSuffix(": \(rule)"), "\(error)")
        #expect(error.detail.contains("refused to connect to \(address) for host"), "\(error)")
        #expect(recorder.recorded == ["127.0.0.1"], "only the origin, once: no retry, nothing else")
        #expect(origin.connectionCount == 1)
        await client.shutdown()
        await origin.stop()
    }

    @Test func aRefusedAddressIsNotConnectedToDirectlyOverLibcurl() async throws {
        let recorder = ConnectRecorder()
        let client = try client(recorder)
        let error = try #require(
            await refusal(client, HTTPClientRequest(url: "http://169.254.169.254/latest/meta-data/")))
        #expect(error.kind == .destinationRefused)
        #expect(
            error.detail
                == "refused to connect to 169.254.169.254 for host 169.254.169.254: 169.254.169.254 (cloud metadata)")
        #expect(error.url == "http://169.254.169.254/latest/meta-data/")
        #expect(recorder.recorded.isEmpty)
        await client.shutdown()
    }

    @Test func aRefusedAddressIsNotConnectedToOverOurOwnConnections() async throws {
        let recorder = ConnectRecorder()
        let client = try client(recorder)
        var request = HTTPClientRequest(url: "http://169.254.169.254/latest/meta-data/")
        request.bodyIsWrittenToFile = true
        let error = try #require(await refusal(client, request))
        #expect(error.kind == .destinationRefused)
        #expect(error.detail.hasSuffix(": 169.254.169.254 (cloud metadata)"))
        #expect(recorder.recorded.isEmpty)
        #expect(client.statistics.ownConnectionTransfers == 1, "carried by our own connections")
        await client.shutdown()
    }

    /// Our own connections hand a redirect to libcurl, which follows it through the policy.
    @Test(arguments: ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://167772161/"])
    func aRedirectFromOurOwnConnectionsIsNotFollowedToARefusedAddress(location: String) async throws {
        let origin = try redirecting(to: location)
        let recorder = ConnectRecorder()
        let client = try client(recorder, policy: DestinationPolicy(deniedRanges: [IPAddressRange("10.0.0.0/8")!]))
        var request = HTTPClientRequest(url: origin.url("start").absoluteString)
        request.bodyIsWrittenToFile = true
        let error = try #require(await refusal(client, request))
        #expect(error.kind == .destinationRefused, "\(error)")
        // Ours, then libcurl's from the start again: both to the origin only.
        #expect(recorder.recorded == ["127.0.0.1", "127.0.0.1"])
        #expect(origin.requests.count == 2)
        await client.shutdown()
        await origin.stop()
    }

    @Test func loopbackIsConnectedToByDefaultAndRefusedOutsideAnAllowList() async throws {
        let origin = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"), .close,
        ])
        let recorder = ConnectRecorder()
        let open = try client(recorder)
        let (head, body) = try await open.data(for: HTTPClientRequest(url: origin.url("a").absoluteString))
        #expect(head.status == .ok)
        #expect(body == Array("ok".utf8))
        await open.shutdown()

        let narrowed = try client(
            recorder, policy: DestinationPolicy(allowedPrivateRanges: [IPAddressRange("192.168.0.0/16")!]))
        let error = try #require(await refusal(narrowed, HTTPClientRequest(url: origin.url("a").absoluteString)))
        #expect(error.detail.hasSuffix(": 127.0.0.0/8 (loopback), not in --proxy-allow"), "\(error)")
        #expect(recorder.recorded == ["127.0.0.1"], "the first client's connect only")
        await narrowed.shutdown()
        await origin.stop()
    }

    /// The control: without a policy the redirect is followed up to the connect, which the hook
    /// sees (and refuses). So the tests above would see a connect the policy let through.
    @Test func withoutAPolicyTheHookSeesTheRedirectTarget() async throws {
        let origin = try redirecting(to: "http://169.254.169.254/latest/meta-data/")
        let recorder = ConnectRecorder()
        let client = try client(recorder, policy: nil)
        let error = try #require(await refusal(client, HTTPClientRequest(url: origin.url("start").absoluteString)))
        #expect(error.kind == .destinationRefused)
        #expect(error.detail.hasSuffix(": refused by the connect hook"))
        #expect(recorder.recorded == ["127.0.0.1", "169.254.169.254"])
        await client.shutdown()
        await origin.stop()
    }

    @Test func aDestinationRefusalIsNotRetried() {
        let error = HTTPClientError.destinationRefused(
            url: "http://169.254.169.254/latest/", address: "169.254.169.254", rule: "169.254.169.254 (cloud metadata)")
        #expect(error.kind == .destinationRefused)
        #expect(!HTTPClientRetryPolicy.isRetryable(error))
        #expect(
            error.description
                == "destination refused for http://169.254.169.254/latest/: refused to connect to 169.254.169.254 "
                + "for host 169.254.169.254: 169.254.169.254 (cloud metadata)")
    }

    @Test func urlSessionRefusesADestinationPolicy() {
        var configuration = HTTPClientConfiguration(backend: .urlSession)
        configuration.destinationPolicy = DestinationPolicy()
        #expect(throws: HTTPClientError(.transportFailure)) { try HTTPClient(configuration: configuration) }
    }
}
#endif
