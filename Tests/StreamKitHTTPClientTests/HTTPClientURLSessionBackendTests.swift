import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitTestSupport
import Testing

/// The URLSession backend (the Apple platforms' transport) run on Linux's FoundationNetworking:
/// the same API and typed outcomes as the libcurl backend, checked against nginx and the responder.
@Suite(.requires(.nginx)) struct HTTPClientURLSessionBackendTests {
    private func client(bufferLimit: Int = 512 << 10) throws -> HTTPClient {
        try HTTPClient(configuration: HTTPClientConfiguration(bodyBufferLimit: bufferLimit, backend: .urlSession))
    }

    @Test func bodiesRangesAndStatusesComeThroughTheSameAPI() async throws {
        let fixture = try await StaticOrigin.start(files: ["f.bin": 200_000, "dir/index.html": 10])
        let client = try client()
        let (head, body) = try await client.data(for: fixture.request("f.bin"))
        #expect(head.status == .ok && head.contentLength == 200_000 && body == fixture.files["f.bin"])

        var ranged = fixture.request("f.bin")
        ranged.range = .closed(first: 1_000, last: 1_999)
        let (partial, part) = try await client.data(for: ranged)
        #expect(partial.status == .partialContent)
        #expect(partial.rangeOutcome == .partial(ContentRange(range: ByteRange(1_000, 2_000), completeLength: 200_000)))
        #expect(part == Array(fixture.files["f.bin"]![1_000..<2_000]))

        let (redirected, _) = try await client.data(for: fixture.request("dir"))
        #expect(redirected.status == .ok && redirected.url == fixture.nginx.url("dir/").absoluteString)
        #expect(redirected.redirectCount == 1)

        let (missing, _) = try await client.data(for: fixture.request("nope"))
        #expect(missing.status == .notFound)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    @Test func aSlowReaderSuspendsTheTaskAndTheBodyStaysWhole() async throws {
        let fixture = try await StaticOrigin.start(files: ["big.bin": 8 << 20])
        let client = try client(bufferLimit: 256 << 10)
        let response = try await client.execute(fixture.request("big.bin"))
        var iterator = response.body.makeAsyncIterator()
        var total = try #require(try await iterator.next()).count
        // The backend suspends the task at the limit. FoundationNetworking keeps delivering to a
        // suspended data task, so on Linux the buffer is not bounded (on Apple platforms suspend
        // stops delivery); Linux uses the libcurl backend, whose bound is tested in
        // HTTPClientConnectionTests.
        #expect(await eventually { client.statistics.bodyPauses >= 1 })
        while let chunk = try await iterator.next() { total += chunk.count }
        #expect(total == 8 << 20)
        await client.shutdown()
        await fixture.nginx.stop()
    }

    @Test func failuresAreTyped() async throws {
        let client = try client()
        let refusing = try LocalNetwork.refusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        await #expect(throws: HTTPClientError(.connectFailed)) {
            try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/x"))
        }
        await #expect(throws: HTTPClientError(.unsupportedScheme)) {
            try await client.execute(HTTPClientRequest(url: "file:///etc/passwd"))
        }
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 302, reason: "Found",
                    headers: [("Location", "file:///etc/passwd"), ("Content-Length", "0")])),
            .close,
        ])
        await #expect(throws: HTTPClientError(.unsupportedScheme)) {
            try await client.execute(HTTPClientRequest(url: responder.url("x")))
        }
        await client.shutdown()
        await responder.stop()
    }

    @Test func fileDownloadsResumeThroughIt() async throws {
        let fixture = try await StaticOrigin.start(files: ["f.bin": 300_000])
        let target = fixture.root.appendingPathComponent("out.bin")
        let client = try client()
        let (first, _) = try await client.data(for: fixture.request("f.bin"))
        try Data(fixture.files["f.bin"]!.prefix(100_000)).write(to: HTTPFileDownloadPaths.partial(for: target))
        let record = """
            {"url":"\(fixture.nginx.url("f.bin").absoluteString)","entityTag":\(try String(decoding: JSONEncoder().encode(first.entityTag!.headerValue), as: UTF8.self)),"completeLength":300000}
            """
        try Data(record.utf8).write(to: HTTPFileDownloadPaths.resumeRecord(for: target))
        let result = try await client.download(fixture.request("f.bin"), to: target).result()
        #expect(result.resumedFrom == 100_000 && result.bytesTransferred == 200_000 && !result.restartedFromZero)
        #expect(try Data(contentsOf: target) == Data(fixture.files["f.bin"]!))
        await client.shutdown()
        await fixture.nginx.stop()
        #expect(try await fixture.nginx.settledAccessLog().last?.range == "bytes=100000-")
    }
}
