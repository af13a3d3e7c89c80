import Foundation
import StreamKitCore
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPClient

#if canImport(Glibc)
import Glibc

/// Requests whose body goes into a file (``HTTPClientRequest/bodyIsWrittenToFile``) run over the
/// client's own connections on Linux, and their bodies are spliced from the socket into the
/// file. These tests check that they do, and that everything else about them is as over libcurl.
@Suite(.requires(.nginx)) struct HTTPClientOwnConnectionTests {
    private func fileRequest(_ fixture: StaticOrigin, _ name: String) -> HTTPClientRequest {
        var request = fixture.request(name)
        request.bodyIsWrittenToFile = true
        return request
    }

    /// Writes the body of `request` into a new file and returns the file's bytes.
    private func download(
        _ client: HTTPClient, _ request: HTTPClientRequest, flags: Int32 = O_WRONLY | O_CREAT | O_TRUNC
    ) async throws -> [UInt8] {
        let path = try TestRun.makeTemporaryDirectory("own-connection").appendingPathComponent("body").path
        let descriptor = open(path, flags | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let response = try await client.execute(request)
        #expect(response.status == .ok)
        try await response.body.write(toFileDescriptor: descriptor, at: 0)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func bodiesAreSplicedIntoTheFileOverOneKeptConnection() async throws {
        let sizes = ["a.bin": 3 << 20, "b.bin": 1, "c.bin": 700_001, "d.bin": 0]
        let fixture = try await StaticOrigin.start(files: sizes)
        let client = try HTTPClient()
        for name in ["a.bin", "b.bin", "c.bin", "d.bin", "a.bin"] {
            #expect(try await download(client, fileRequest(fixture, name)) == fixture.files[name], "\(name)")
        }
        let statistics = client.statistics
        #expect(statistics.ownConnectionTransfers == 5)
        #expect(statistics.connectionsOpened == 1)
        // All but the few KiB that arrive with each head.
        let bodies: Int64 = 2 * (3 << 20) + 700_001
        #expect(statistics.bytesSpliced > bodies - 5 * 4096, "\(statistics.bytesSpliced)")
        #expect(statistics.activeTransfers == 0)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    @Test func aRequestThatDoesNotSayItWritesAFileStaysWithLibcurl() async throws {
        let fixture = try await StaticOrigin.start(files: ["a.bin": 100_000])
        let client = try HTTPClient()
        #expect(try await download(client, fixture.request("a.bin")) == fixture.files["a.bin"])
        #expect(client.statistics.ownConnectionTransfers == 0)
        #expect(client.statistics.bytesSpliced == 0)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    @Test func aRangeIsSplicedAtTheOffsetAskedFor() async throws {
        let fixture = try await StaticOrigin.start(files: ["a.bin": 2 << 20])
        let client = try HTTPClient()
        let path = try TestRun.makeTemporaryDirectory("own-connection").appendingPathComponent("range").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var request = fileRequest(fixture, "a.bin")
        request.range = .closed(first: 1_000_000, last: 1_999_999)
        let response = try await client.execute(request)
        #expect(response.status == .partialContent)
        let written = try await response.body.write(toFileDescriptor: descriptor, at: 500)
        #expect(written == 1_000_000)
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(stored.count == 1_000_500)
        #expect(Array(stored[500...]) == Array(fixture.files["a.bin"]![1_000_000..<2_000_000]))
        #expect(client.statistics.bytesSpliced > 900_000)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    /// A file in append mode takes no splice: the bytes are copied instead, all of them.
    @Test func aFileThatTakesNoSpliceGetsItsBytesCopied() async throws {
        let fixture = try await StaticOrigin.start(files: ["a.bin": 1 << 20])
        let client = try HTTPClient()
        let stored = try await download(client, fileRequest(fixture, "a.bin"), flags: O_WRONLY | O_CREAT | O_APPEND)
        #expect(stored == fixture.files["a.bin"])
        #expect(client.statistics.ownConnectionTransfers == 1)
        #expect(client.statistics.bytesSpliced == 0)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    /// A reader that takes chunks slowly through a small buffer pauses the transfer again and
    /// again; every byte still arrives, the last ones included.
    @Test func aSlowChunkReaderGetsEveryByte() async throws {
        let fixture = try await StaticOrigin.start(files: ["a.bin": 4 << 20])
        let client = try HTTPClient(configuration: HTTPClientConfiguration(bodyBufferLimit: 64 << 10))
        for _ in 0..<3 {
            let response = try await client.execute(fileRequest(fixture, "a.bin"))
            var received: [UInt8] = []
            for try await chunk in response.body {
                received += chunk
                if received.count % 5 == 0 { try await Task.sleep(for: .microseconds(200)) }
            }
            #expect(received == fixture.files["a.bin"])
        }
        #expect(client.statistics.bodyPauses > 0)
        #expect(client.statistics.ownConnectionTransfers == 3)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    @Test func noMoreConnectionsThanThePerHostLimit() async throws {
        let fixture = try await StaticOrigin.start(files: ["a.bin": 1 << 20], limitRate: 4 << 20)
        let client = try HTTPClient(configuration: HTTPClientConfiguration(maximumConnectionsPerHost: 2))
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<6 {
                group.addTask { try await download(client, fileRequest(fixture, "a.bin")) == fixture.files["a.bin"] }
            }
            for try await identical in group { #expect(identical) }
        }
        #expect(client.statistics.ownConnectionTransfers == 6)
        #expect(client.statistics.connectionsOpened <= 2)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    @Test func aCancelledDownloadEndsItsTransferAndFreesTheConnection() async throws {
        let fixture = try await StaticOrigin.start(files: ["a.bin": 4 << 20, "b.bin": 1000], limitRate: 256 << 10)
        let client = try HTTPClient(configuration: HTTPClientConfiguration(maximumConnectionsPerHost: 1))
        let task = Task { try await download(client, fileRequest(fixture, "a.bin")) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: HTTPClientError.self) { try await task.value }
        // The one connection slot is free again: the next download goes through.
        #expect(try await download(client, fileRequest(fixture, "b.bin")) == fixture.files["b.bin"])
        // The transfer objects go once their threads returned.
        let deadline = ContinuousClock.now + .seconds(10)
        while client.statistics.liveTransferObjects > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(client.statistics.liveTransferObjects == 0)
        #expect(client.statistics.activeTransfers == 0)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    /// A request waiting for a connection slot to the host fails after its idle timeout, as one
    /// queued inside libcurl does.
    @Test func waitingForAConnectionSlotEndsAtTheIdleTimeout() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "1000")], body: [1])),
            .stall,
        ])
        let client = try HTTPClient(
            configuration: HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(5), idle: .milliseconds(300)),
                maximumConnectionsPerHost: 1))
        var request = HTTPClientRequest(url: responder.url("x").absoluteString)
        request.bodyIsWrittenToFile = true
        let holding = try await client.execute(request)  // holds the one slot, its body unread
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) { try await client.execute(request) }
        #expect(error?.kind == .idleTimeout)
        #expect(ContinuousClock.now - started < .seconds(20))
        holding.body.cancel()
        await client.shutdown()
        await responder.stop()
    }

    @Test func shutdownStopsATransferWaitingForBytes() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "1000")], body: [1, 2])),
            .stall,
        ])
        let client = try HTTPClient()
        var request = HTTPClientRequest(url: responder.url("x").absoluteString)
        request.bodyIsWrittenToFile = true
        // Without shutdown the transfer would end at this idle timeout; the bound below is far
        // from it, so a test process held up for seconds (the full suite has delayed a task's
        // resumption by up to 10 s) still tells "stopped by shutdown" from "timed out".
        request.timeouts = HTTPClientTimeouts(idle: .seconds(120))
        let response = try await client.execute(request)
        let reading = Task { try await response.body.collect(upTo: 10_000) }
        #expect(await eventually { client.statistics.activeTransfers == 1 })
        let started = ContinuousClock.now
        await client.shutdown()
        let error = await #expect(throws: HTTPClientError.self) { try await reading.value }
        #expect(error?.kind == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(30))
        await responder.stop()
    }
}

/// The scripted responder's faults of keep-alive, redirects and body framing, for requests over
/// the client's own connections.
@Suite struct HTTPClientOwnConnectionFramingTests {
    private static let body = Array("0123456789".utf8)

    private func request(_ url: URL) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.bodyIsWrittenToFile = true
        return request
    }

    @Test func aConnectionTheServerClosedWhileIdleIsNotReused() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "10")], body: Self.body)),
            .sleep(.milliseconds(50)), .close,
        ])
        let client = try HTTPClient()
        for _ in 0..<2 {
            let response = try await client.execute(request(responder.url("x")))
            #expect(try await response.body.collect(upTo: 100) == Self.body)
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(responder.connectionCount == 2)
        #expect(client.statistics.ownConnectionTransfers == 2)
        await client.shutdown()
        await responder.stop()
    }

    /// The server closes a kept connection just as the next request goes out: the request is
    /// sent again on a fresh connection, and the caller sees nothing of it.
    @Test func aKeptConnectionClosedUnderTheNextRequestIsReplacedOnce() async throws {
        let responder = try ScriptedTCPResponder { index in
            index == 0
                ? [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: [("Content-Length", "10")], body: Self.body)),
                    .readRequestHead, .close,
                ]
                : [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: [("Content-Length", "10")], body: Self.body)),
                    .close,
                ]
        }
        let client = try HTTPClient()
        for _ in 0..<2 {
            let response = try await client.execute(request(responder.url("x")))
            #expect(try await response.body.collect(upTo: 100) == Self.body)
        }
        #expect(responder.connectionCount == 2)
        #expect(client.statistics.connectionsOpened == 2)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aRedirectIsFollowedByLibcurl() async throws {
        // Connection 0 is the client's own, 1 is libcurl's request for the same URL, 2 the hop.
        let responder = try ScriptedTCPResponder { index in
            [
                .readRequestHead,
                .send(
                    index <= 1
                        ? ScriptedTCPResponder.httpResponse(
                            status: 302, reason: "Found", headers: [("Location", "/there"), ("Content-Length", "0")])
                        : ScriptedTCPResponder.httpResponse(
                            status: 200, headers: [("Content-Length", "10")], body: Self.body)),
                .close,
            ]
        }
        let client = try HTTPClient()
        let response = try await client.execute(request(responder.url("here")))
        #expect(response.status == .ok)
        #expect(response.url.hasSuffix("/there"))
        #expect(response.head.redirectCount == 1)
        #expect(try await response.body.collect(upTo: 100) == Self.body)
        #expect(responder.connectionCount == 3)
        await client.shutdown()
        await responder.stop()
    }

    /// An origin that redirected once is left to libcurl: its next request costs one request,
    /// not two.
    @Test func anOriginThatRedirectedGoesToLibcurlDirectly() async throws {
        // Connection 0 is the client's own; libcurl keeps its connection for the rest.
        let responder = try ScriptedTCPResponder { index in
            [.readRequestHead]
                + Array(
                    repeating: [
                        ScriptedTCPResponder.Step.send(
                            ScriptedTCPResponder.httpResponse(
                                status: 302, reason: "Found",
                                headers: [("Location", "/there"), ("Content-Length", "0")]
                            )),
                        .readRequestHead,
                        .send(
                            ScriptedTCPResponder.httpResponse(
                                status: 200, headers: [("Content-Length", "10")], body: Self.body)),
                        .readRequestHead,
                    ], count: index == 0 ? 0 : 2
                ).flatMap { $0 }
                + [
                    index == 0
                        ? .send(
                            ScriptedTCPResponder.httpResponse(
                                status: 302, reason: "Found",
                                headers: [("Location", "/there"), ("Content-Length", "0")]
                            )) : .close,
                    .close,
                ]
        }
        let client = try HTTPClient()
        for _ in 0..<2 {
            let response = try await client.execute(request(responder.url("here")))
            #expect(try await response.body.collect(upTo: 100) == Self.body)
        }
        // One connection of ours, one of libcurl's for both requests and their hops.
        #expect(responder.connectionCount == 2)
        #expect(client.statistics.ownConnectionTransfers == 0)
        #expect(responder.requests.count == 5)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aRedirectNotFollowedIsTheResponse() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, reason: "Found", headers: [("Location", "/there"), ("Content-Length", "10")],
                    body: Self.body)),
            .close,
        ])
        let client = try HTTPClient(configuration: HTTPClientConfiguration(redirectLimit: 0))
        let response = try await client.execute(request(responder.url("here")))
        #expect(response.status.rawValue == 302)
        #expect(try await response.body.collect(upTo: 100) == Self.body)
        #expect(responder.connectionCount == 1)
        await client.shutdown()
        await responder.stop()
    }

    /// A chunked body is dropped unread and fetched again through libcurl, which reads chunks.
    @Test func aChunkedBodyIsFetchedAgainThroughLibcurl() async throws {
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n0123\r\n6\r\n456789\r\n0\r\n\r\n"
        let responder = try ScriptedTCPResponder(steps: [.readRequestHead, .send(chunked), .close])
        let client = try HTTPClient()
        let response = try await client.execute(request(responder.url("x")))
        #expect(try await response.body.collect(upTo: 100) == Self.body)
        #expect(responder.connectionCount == 2)
        await client.shutdown()
        await responder.stop()
    }

    /// A body without a length ends where the server closes.
    @Test func aBodyWithoutALengthEndsAtTheClose() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead, .send("HTTP/1.0 200 OK\r\n\r\n"), .send(Self.body), .close,
        ])
        let client = try HTTPClient()
        let response = try await client.execute(request(responder.url("x")))
        #expect(try await response.body.collect(upTo: 100) == Self.body)
        await client.shutdown()
        await responder.stop()
    }

    @Test func theRequestHeadIsWhatLibcurlWouldSend() async throws {
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(ScriptedTCPResponder.httpResponse(status: 200, headers: [("Content-Length", "10")], body: Self.body)),
            .close,
        ])
        let client = try HTTPClient(configuration: HTTPClientConfiguration(userAgent: "agent/1"))
        var request = request(URL(string: responder.url("a%20b").absoluteString + "?q=1&r=%2F")!)
        request.headers = ["X-Token": "t"]
        request.cookies = [("c", "1")]
        request.range = .from(first: 0)
        _ = try await client.execute(request).body.collect(upTo: 100)
        let sent = try #require(responder.requests.first)
        #expect(sent.hasPrefix("GET /a%20b?q=1&r=%2F HTTP/1.1\r\n"))
        for line in [
            "Host: 127.0.0.1:\(responder.port)", "User-Agent: agent/1", "Accept: */*", "Cookie: c=1", "X-Token: t",
            "Range: bytes=0-",
        ] {
            #expect(sent.contains("\r\n\(line)\r\n"), "\(line)")
        }
        #expect(!sent.contains("Accept-Encoding"))
        await client.shutdown()
        await responder.stop()
    }
}
#endif

/// Which requests the client's own connections carry, and the head they send (pure).
@Suite struct PlainHTTPTargetTests {
    private func target(_ request: HTTPClientRequest) -> PlainHTTPTarget? {
        PlainHTTPTarget(request: request, userAgent: "agent/1")
    }

    @Test(arguments: ["https://127.0.0.1/x", "http://user:pass@127.0.0.1/x", "http://127.0.0.1:0/x"])
    func requestsLeftToLibcurl(url: String) {
        #expect(target(HTTPClientRequest(url: url)) == nil)
    }

    @Test func otherMethodsAndBodiesAreLeftToLibcurl() {
        #expect(target(HTTPClientRequest(url: "http://127.0.0.1/x", method: .head)) == nil)
        var post = HTTPClientRequest(url: "http://127.0.0.1/x")
        post.body = [1]
        #expect(target(post) == nil)
        var badHeader = HTTPClientRequest(url: "http://127.0.0.1/x")
        badHeader.headers = ["X-A": "1\r\nX-B: 2"]
        #expect(target(badHeader) == nil)
    }

    @Test func theHeadNamesTheHostAndPortAndKeepsThePathAsWritten() throws {
        let plain = try #require(target(HTTPClientRequest(url: "HTTP://Example.com/a%2Fb/c?x=%20")))
        #expect(plain.origin == .init(host: "Example.com", port: 80))
        #expect(
            String(decoding: plain.head, as: UTF8.self)
                == "GET /a%2Fb/c?x=%20 HTTP/1.1\r\nHost: Example.com\r\nUser-Agent: agent/1\r\nAccept: */*\r\n\r\n")
        let literal = try #require(target(HTTPClientRequest(url: "http://[::1]:8080")))
        #expect(literal.origin == .init(host: "::1", port: 8080))
        #expect(String(decoding: literal.head, as: UTF8.self).hasPrefix("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n"))
    }

    @Test func theRequestsOwnFieldsReplaceTheDefaults() throws {
        var request = HTTPClientRequest(url: "http://127.0.0.1:81/x")
        request.headers = ["User-Agent": "mine", "Accept": "video/*", "Host": "other"]
        request.range = .closed(first: 5, last: 9)
        request.ifRange = .entityTag(EntityTag(opaqueTag: "v"))
        let head = String(decoding: try #require(target(request)).head, as: UTF8.self)
        #expect(
            head == "GET /x HTTP/1.1\r\nUser-Agent: mine\r\nAccept: video/*\r\nHost: other\r\n"
                + "Range: bytes=5-9\r\nIf-Range: \"v\"\r\n\r\n")
    }
}
