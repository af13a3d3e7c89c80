import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitTestSupport
import Testing

/// Faults nginx cannot stage, from the scripted TCP responder: each ends in a clear typed error
/// or the documented fallback, over libcurl and over the client's own connections (a request
/// whose body is written to a file) alike.
@Suite struct HTTPClientFaultTests {
    private static let body = Array(repeating: UInt8(ascii: "x"), count: 1000)

    /// Which of the client's two transports carries the request.
    enum Transport: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case libcurl
        case ownConnection

        var testDescription: String { rawValue }
    }

    private func request(_ url: URL, _ transport: Transport) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.bodyIsWrittenToFile = transport == .ownConnection
        return request
    }

    /// Checks that the transfers went where `transport` says.
    private func expectCarried(
        _ client: HTTPClient, by transport: Transport, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let statistics = client.statistics
        if transport == .ownConnection {
            #expect(statistics.ownConnectionTransfers > 0, sourceLocation: sourceLocation)
        } else {
            #expect(statistics.ownConnectionTransfers == 0, sourceLocation: sourceLocation)
        }
    }

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

    /// A redirect to another host carries no Referer: it would hand the first URL, signed query and
    /// all, to the second host.
    @Test(arguments: Transport.allCases) func aRedirectSendsNoReferer(transport: Transport) async throws {
        let target = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "2")], body: [1, 2])),
            .close,
        ])
        let redirect = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, headers: [("Location", target.url("b").absoluteString), ("Content-Length", "0")],
                    body: [])),
            .close,
        ])
        let client = try client()
        let response = try await client.execute(
            request(redirect.url("a?signature=secret"), transport))
        #expect(response.status == .ok)
        for try await _ in response.body {}
        let head = try #require(target.requests.first)
        #expect(head.hasPrefix("GET /b "), "\(head)")
        #expect(!head.lowercased().contains("referer"), "\(head)")
        await client.shutdown()
        await redirect.stop()
        await target.stop()
    }

    @Test(arguments: Transport.allCases) func resetMidBodyIsAConnectionResetAtTheOffsetReached(
        transport: Transport
    ) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000")], body: Array(Self.body.prefix(400)))),
            .sleep(.milliseconds(100)), .reset,
        ])
        let client = try client()
        let response = try await client.execute(request(responder.url("file"), transport))
        #expect(response.status == .ok)
        let error = try #require(await bodyError(response))
        #expect(error.kind == .connectionReset)
        #expect(error.byteOffset == 400)
        #expect(error.expectedByteOffset == 1000)
        #expect(HTTPClientRetryPolicy.isRetryable(error))
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func closeBeforeTheAnnouncedLengthIsATruncatedBody(
        transport: Transport
    ) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000")], body: Array(Self.body.prefix(600)))),
            .close,
        ])
        let client = try client()
        let response = try await client.execute(request(responder.url("file"), transport))
        let error = try #require(await bodyError(response))
        #expect(error.kind == .truncatedBody)
        #expect(error.byteOffset == 600)
        #expect(error.expectedByteOffset == 1000)
        #expect(error.url == responder.url("file").absoluteString)
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aStallBeforeTheHeadIsAnIdleTimeout(transport: Transport) async throws {
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .stall])
        let client = try client(idle: .milliseconds(300))
        let started = ContinuousClock.now
        let error = try #require(await headError(client, request(responder.url("file"), transport)))
        #expect(error.kind == .idleTimeout)
        // Far below the 60 s that would pass without the 300 ms idle timeout, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(20))
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aStallMidBodyIsAnIdleTimeoutAtTheOffsetReached(
        transport: Transport
    ) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000")], body: Array(Self.body.prefix(250)))),
            .stall,
        ])
        let client = try client(idle: .milliseconds(300))
        let response = try await client.execute(request(responder.url("file"), transport))
        let error = try #require(await bodyError(response))
        #expect(error.kind == .idleTimeout)
        #expect(error.byteOffset == 250)
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aGarbageStatusLineIsAMalformedResponse(transport: Transport) async throws
    {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send("SPDY/9 OK whatever\r\n\r\nhello"), .close,
        ])
        let client = try client()
        let error = try #require(await headError(client, request(responder.url("file"), transport)))
        #expect(error.kind == .malformedResponse)
        #expect(!HTTPClientRetryPolicy.isRetryable(error))
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aTenMegabyteHeaderLineIsRefused(transport: Transport) async throws {
        let big =
            "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 10 << 20) + "\r\nContent-Length: 2\r\n\r\nhi"
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .send(big), .close])
        let client = try client()
        let error = try #require(await headError(client, request(responder.url("file"), transport)))
        #expect(error.kind == .headerTooLarge)
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aRedirectLoopStopsAtTheLimit(transport: Transport) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, reason: "Found", headers: [("Location", "/loop"), ("Content-Length", "0")])),
            .close,
        ])
        let client = try client(redirects: 5)
        let error = try #require(await headError(client, request(responder.url("loop"), transport)))
        #expect(error.kind == .tooManyRedirects)
        // Over the client's own connection the first redirect is handed to libcurl, which follows.
        #expect(responder.connectionCount == (transport == .ownConnection ? 7 : 6))
        // A transfer handed to libcurl counts as libcurl's alone.
        #expect(client.statistics.ownConnectionTransfers == 0)
        #expect(client.statistics.transfersStarted == 1)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/file", "gopher://127.0.0.1/"], Transport.allCases)
    func aRedirectToAnotherSchemeIsRefused(target: String, transport: Transport) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, reason: "Found", headers: [("Location", target), ("Content-Length", "0")])),
            .close,
        ])
        let client = try client()
        let error = try #require(await headError(client, request(responder.url("file"), transport)))
        #expect(error.kind == .unsupportedScheme)
        #expect(error.url == target)
        #expect(responder.connectionCount == (transport == .ownConnection ? 2 : 1))
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

    @Test(arguments: Transport.allCases) func aTwoHundredToARangeRequestIsReportedAsIgnored(
        transport: Transport
    ) async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "1000"), ("ETag", "\"v2\"")], body: Self.body)),
            .close,
        ])
        let client = try client()
        var ranged = request(responder.url("file"), transport)
        ranged.range = .from(first: 500)
        ranged.ifRange = .entityTag(EntityTag(opaqueTag: "v1"))
        let response = try await client.execute(ranged)
        #expect(response.head.rangeOutcome == .ignored(representationChanged: true))
        #expect(response.head.bodyOffset == 0)
        let body = try await response.body.collect(upTo: 10_000)
        #expect(body.count == 1000)
        #expect(responder.requests.first?.contains("Range: bytes=500-\r\n") == true)
        #expect(responder.requests.first?.contains("If-Range: \"v1\"\r\n") == true)
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aContentRangeThatIsNotWhatWasAskedIsAnError(
        transport: Transport
    ) async throws {
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
        var ranged = request(responder.url("file"), transport)
        ranged.range = .closed(first: 500, last: 599)
        let error = try #require(await headError(client, ranged))
        #expect(error.kind == .contentRangeMismatch)
        #expect(error.detail.contains("bytes=500-599"))
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: Transport.allCases) func aConnectionRefusedIsAConnectFailure(transport: Transport) async throws {
        let refusing = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let client = try client()
        let error = try #require(
            await headError(client, request(URL(string: "http://127.0.0.1:\(port)/x")!, transport)))
        #expect(error.kind == .connectFailed)
        #expect(HTTPClientRetryPolicy.isRetryable(error))
        expectCarried(client, by: transport)
        await client.shutdown()
    }

    @Test(arguments: Transport.allCases) func anEmptyReplyIsReported(transport: Transport) async throws {
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .close])
        let client = try client()
        let error = try #require(await headError(client, request(responder.url("x"), transport)))
        #expect(error.kind == .emptyResponse)
        expectCarried(client, by: transport)
        await client.shutdown()
        await responder.stop()
    }
}
