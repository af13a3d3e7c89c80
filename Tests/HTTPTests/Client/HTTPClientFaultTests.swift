import Core
import Foundation
import HTTP
import TestSupport
import Testing

/// Faults nginx cannot stage, from the scripted TCP responder: each ends in a clear typed error
/// or the documented fallback.
@Suite struct HTTPClientFaultTests {
    private static let body = Array(repeating: UInt8(ascii: "x"), count: 1000)

    private func client(idle: Duration? = .seconds(60), redirects: Int = 10) throws -> HTTPClient {
        try HTTPClient(
            configuration: HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(5), idle: idle), redirectLimit: redirects))
    }

    /// Reads the body to its end and returns the error it ended with, if any.
    private func bodyError(_ response: HTTPClientResponse) async -> HTTPClientError? {
        do {
            for try await _ in response.body {}
            return nil
        } catch {
            return error as? HTTPClientError
        }
    }

    private func headError(_ client: HTTPClient, _ request: HTTPClientRequest) async -> HTTPClientError? {
        do {
            _ = try await client.execute(request)
            return nil
        } catch {
            return error as? HTTPClientError
        }
    }

    @Test func resetMidBodyIsAConnectionResetAtTheOffsetReached() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000")], body: Array(Self.body.prefix(400)))),
            .sleep(.milliseconds(100)), .reset,
        ])
        let client = try client()
        let response = try await client.execute(HTTPClientRequest(url: responder.url("file")))
        #expect(response.status == .ok)
        let error = try #require(await bodyError(response))
        #expect(error.kind == .connectionReset)
        #expect(error.byteOffset == 400)
        #expect(error.expectedByteOffset == 1000)
        #expect(HTTPClientRetryPolicy.isRetryable(error))
        await client.shutdown()
        await responder.stop()
    }

    @Test func closeBeforeTheAnnouncedLengthIsATruncatedBody() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000")], body: Array(Self.body.prefix(600)))),
            .close,
        ])
        let client = try client()
        let response = try await client.execute(HTTPClientRequest(url: responder.url("file")))
        let error = try #require(await bodyError(response))
        #expect(error.kind == .truncatedBody)
        #expect(error.byteOffset == 600)
        #expect(error.expectedByteOffset == 1000)
        #expect(error.url == responder.url("file").absoluteString)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aStallBeforeTheHeadIsAnIdleTimeout() async throws {
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .stall])
        let client = try client(idle: .milliseconds(300))
        let started = ContinuousClock.now
        let error = try #require(await headError(client, HTTPClientRequest(url: responder.url("file"))))
        #expect(error.kind == .idleTimeout)
        // Far below the 60 s that would pass without the 300 ms idle timeout, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(20))
        await client.shutdown()
        await responder.stop()
    }

    @Test func aStallMidBodyIsAnIdleTimeoutAtTheOffsetReached() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000")], body: Array(Self.body.prefix(250)))),
            .stall,
        ])
        let client = try client(idle: .milliseconds(300))
        let response = try await client.execute(HTTPClientRequest(url: responder.url("file")))
        let error = try #require(await bodyError(response))
        #expect(error.kind == .idleTimeout)
        #expect(error.byteOffset == 250)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aGarbageStatusLineIsAMalformedResponse() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send("SPDY/9 OK whatever\r\n\r\nhello"), .close,
        ])
        let client = try client()
        let error = try #require(await headError(client, HTTPClientRequest(url: responder.url("file"))))
        #expect(error.kind == .malformedResponse)
        #expect(!HTTPClientRetryPolicy.isRetryable(error))
        await client.shutdown()
        await responder.stop()
    }

    @Test func aTenMegabyteHeaderLineIsRefused() async throws {
        let big =
            "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 10 << 20) + "\r\nContent-Length: 2\r\n\r\nhi"
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .send(big), .close])
        let client = try client()
        let error = try #require(await headError(client, HTTPClientRequest(url: responder.url("file"))))
        #expect(error.kind == .headerTooLarge)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aRedirectLoopStopsAtTheLimit() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, reason: "Found", headers: [("Location", "/loop"), ("Content-Length", "0")])),
            .close,
        ])
        let client = try client(redirects: 5)
        let error = try #require(await headError(client, HTTPClientRequest(url: responder.url("loop"))))
        #expect(error.kind == .tooManyRedirects)
        #expect(responder.connectionCount == 6)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/file", "gopher://127.0.0.1/"])
    func aRedirectToAnotherSchemeIsRefused(target: String) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, reason: "Found", headers: [("Location", target), ("Content-Length", "0")])),
            .close,
        ])
        let client = try client()
        let error = try #require(await headError(client, HTTPClientRequest(url: responder.url("file"))))
        #expect(error.kind == .unsupportedScheme)
        #expect(error.url == target)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "not a url", "http://"])
    func requestsForOtherSchemesAreRefusedBeforeSending(url: String) async throws {
        let client = try client()
        let error = try #require(await headError(client, HTTPClientRequest(url: url)))
        #expect(error.kind == .unsupportedScheme || error.kind == .invalidRequest)
        #expect(client.statistics.transfersStarted == 0)
        await client.shutdown()
    }

    @Test func aTwoHundredToARangeRequestIsReportedAsIgnored() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000"), ("ETag", "\"v2\"")], body: Self.body)),
            .close,
        ])
        let client = try client()
        var request = HTTPClientRequest(url: responder.url("file").absoluteString)
        request.range = .from(first: 500)
        request.ifRange = .entityTag(EntityTag(opaqueTag: "v1"))
        let response = try await client.execute(request)
        #expect(response.head.rangeOutcome == .ignored(representationChanged: true))
        #expect(response.head.bodyOffset == 0)
        let body = try await response.body.collect(upTo: 10_000)
        #expect(body.count == 1000)
        #expect(responder.requests.first?.contains("Range: bytes=500-\r\n") == true)
        #expect(responder.requests.first?.contains("If-Range: \"v1\"\r\n") == true)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aContentRangeThatIsNotWhatWasAskedIsAnError() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 206, reason: "Partial Content",
                    headers: [("Content-Range", "bytes 0-99/1000"), ("Content-Length", "100")],
                    body: Array(Self.body.prefix(100)))),
            .close,
        ])
        let client = try client()
        var request = HTTPClientRequest(url: responder.url("file").absoluteString)
        request.range = .closed(first: 500, last: 599)
        let error = try #require(await headError(client, request))
        #expect(error.kind == .contentRangeMismatch)
        #expect(error.detail.contains("bytes=500-599"))
        await client.shutdown()
        await responder.stop()
    }

    @Test func aConnectionRefusedIsAConnectFailure() async throws {
        let refusing = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let client = try client()
        let error = try #require(await headError(client, HTTPClientRequest(url: "http://127.0.0.1:\(port)/x")))
        #expect(error.kind == .connectFailed)
        #expect(HTTPClientRetryPolicy.isRetryable(error))
        await client.shutdown()
    }

    @Test func anEmptyReplyIsReported() async throws {
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .close])
        let client = try client()
        let error = try #require(await headError(client, HTTPClientRequest(url: responder.url("x"))))
        #expect(error.kind == .emptyResponse)
        await client.shutdown()
        await responder.stop()
    }
}
