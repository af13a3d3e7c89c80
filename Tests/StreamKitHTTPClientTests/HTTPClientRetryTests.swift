import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPClient

/// Retries against the scripted responder, with recorded (instant) sleeps and seeded jitter.
@Suite struct HTTPClientRetryTests {
    private static let body = Array("0123456789".utf8)

    private func client(
        recorder: HTTPClientRetryTiming.SleepRecorder, now: Date = Date(timeIntervalSince1970: 1_700_000_000)
    )
        throws -> HTTPClient
    {
        try HTTPClient(
            configuration: HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(5), idle: .seconds(5)),
                retryTiming: .recording(seed: 1, now: now, recorder: recorder)))
    }

    private static func response(
        _ status: Int, _ headers: [(String, String)] = [], body: [UInt8] = []
    )
        -> [ScriptedTCPResponder.Step]
    {
        [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: status, reason: HTTPStatus(status).reasonPhrase,
                    headers: headers + [("Content-Length", "\(body.count)"), ("Connection", "close")], body: body)),
            .close,
        ]
    }

    @Test func serverErrorsAreRetriedHonouringRetryAfterUntilSuccess() async throws {
        let retryDate = Date(timeIntervalSince1970: 1_700_000_000 + 42)
        let responder = try ScriptedTCPResponder { index in
            switch index {
            case 0: Self.response(503, [("Retry-After", "3")])
            case 1: Self.response(429, [("Retry-After", HTTPDate.format(retryDate))])
            case 2: Self.response(500)
            default: Self.response(200, body: Self.body)
            }
        }
        let recorder = HTTPClientRetryTiming.SleepRecorder()
        let client = try client(recorder: recorder)
        let policy = HTTPClientRetryPolicy(maximumAttempts: 5, initialDelay: .milliseconds(100), jitter: 0.5)
        let (head, body) = try await client.data(for: HTTPClientRequest(url: responder.url("x")), retry: policy)
        #expect(head.status == .ok && body == Self.body)
        #expect(responder.connectionCount == 4)
        let sleeps = recorder.recorded
        #expect(sleeps.count == 3)
        #expect(sleeps[0] == .seconds(3))  // Retry-After in seconds beats a 100 ms backoff
        #expect(sleeps[1] == .seconds(42))  // Retry-After as an HTTP date, from the injected now
        #expect(sleeps[2] >= .milliseconds(200) && sleeps[2] <= .milliseconds(400))  // third backoff, jittered
        await client.shutdown()
        await responder.stop()
    }

    @Test(arguments: [400, 401, 403, 404, 410, 416])
    func otherClientErrorsAreNeverRetried(status: Int) async throws {
        let responder = try ScriptedTCPResponder { _ in Self.response(status) }
        let recorder = HTTPClientRetryTiming.SleepRecorder()
        let client = try client(recorder: recorder)
        let response = try await client.execute(HTTPClientRequest(url: responder.url("x")), retry: .default)
        #expect(response.status.rawValue == status)
        #expect(responder.connectionCount == 1 && recorder.recorded.isEmpty)
        await client.shutdown()
        await responder.stop()
    }

    @Test func theAttemptLimitEndsWithTheLastResponse() async throws {
        let responder = try ScriptedTCPResponder { _ in Self.response(502) }
        let recorder = HTTPClientRetryTiming.SleepRecorder()
        let client = try client(recorder: recorder)
        let response = try await client.execute(
            HTTPClientRequest(url: responder.url("x")), retry: HTTPClientRetryPolicy(maximumAttempts: 3))
        #expect(response.status == .badGateway)
        #expect(responder.connectionCount == 3 && recorder.recorded.count == 2)
        await client.shutdown()
        await responder.stop()
    }

    @Test func resetsAndTruncationsAreRetriedForSmallBodies() async throws {
        let responder = try ScriptedTCPResponder { index in
            switch index {
            case 0: [.readRequestHead, .reset]
            case 1:
                [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: [("Content-Length", "10")], body: [1, 2])),
                    .close,
                ]
            default: Self.response(200, body: Self.body)
            }
        }
        let recorder = HTTPClientRetryTiming.SleepRecorder()
        let client = try client(recorder: recorder)
        let (_, body) = try await client.data(for: HTTPClientRequest(url: responder.url("x")), retry: .default)
        #expect(body == Self.body && responder.connectionCount == 3 && recorder.recorded.count == 2)
        await client.shutdown()
        await responder.stop()
    }
}

/// File downloads that resume, against the scripted responder and nginx.
@Suite struct HTTPFileDownloadTests {
    private static let content = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    private func client() throws -> HTTPClient {
        try HTTPClient(
            configuration: HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(5), idle: .seconds(5)),
                retryTiming: .recording(seed: 1, recorder: HTTPClientRetryTiming.SleepRecorder())))
    }

    @Test func aResetMidBodyResumesFromTheByteReachedWithIfRange() async throws {
        let responder = try ScriptedTCPResponder { index in
            if index == 0 {
                return [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: [("Content-Length", "1000"), ("ETag", "\"v1\"")],
                            body: Array(Self.content.prefix(400)))),
                    .sleep(.milliseconds(50)), .reset,
                ]
            }
            return [
                .readRequestHead,
                .send(
                    ScriptedTCPResponder.httpResponse(
                        status: 206, reason: "Partial Content",
                        headers: [
                            ("Content-Range", "bytes 400-999/1000"), ("Content-Length", "600"), ("ETag", "\"v1\""),
                        ],
                        body: Array(Self.content[400...]))),
                .close,
            ]
        }
        let directory = try TestRun.makeTemporaryDirectory("download")
        let target = directory.appendingPathComponent("f.bin")
        let client = try client()
        let download = client.download(HTTPClientRequest(url: responder.url("f.bin")), to: target)
        let result = try await download.result()
        #expect(try Data(contentsOf: target) == Data(Self.content))
        #expect(result.byteCount == 1000 && result.attempts == 2 && result.bytesTransferred == 1000)
        #expect(!result.restartedFromZero && result.resumedFrom == 0)
        let second = try #require(responder.requests.last)
        #expect(second.contains("Range: bytes=400-\r\n") && second.contains("If-Range: \"v1\"\r\n"))
        #expect(!FileManager.default.fileExists(atPath: HTTPFileDownloadPaths.partial(for: target).path))
        #expect(!FileManager.default.fileExists(atPath: HTTPFileDownloadPaths.resumeRecord(for: target).path))
        await client.shutdown()
        await responder.stop()
    }

    @Test func aChangedFileStartsOverInsteadOfMixingVersions() async throws {
        let newContent = Array(Self.content.reversed())
        let responder = try ScriptedTCPResponder { index in
            if index == 0 {
                return [
                    .readRequestHead,
                    .send(
                        ScriptedTCPResponder.httpResponse(
                            status: 200, headers: [("Content-Length", "1000"), ("ETag", "\"v1\"")],
                            body: Array(Self.content.prefix(300)))),
                    .close,
                ]
            }
            // If-Range no longer matches: the whole new version.
            return [
                .readRequestHead,
                .send(
                    ScriptedTCPResponder.httpResponse(
                        status: 200, headers: [("Content-Length", "1000"), ("ETag", "\"v2\"")], body: newContent)),
                .close,
            ]
        }
        let target = try TestRun.makeTemporaryDirectory("download").appendingPathComponent("f.bin")
        let client = try client()
        let result = try await client.download(HTTPClientRequest(url: responder.url("f.bin")), to: target).result()
        #expect(try Data(contentsOf: target) == Data(newContent))
        #expect(result.restartedFromZero && result.attempts == 2)
        await client.shutdown()
        await responder.stop()
    }

    @Test func aServerThatIgnoresRangeIsFollowedFromZero() async throws {
        let fixture = try await StaticOrigin.start(files: ["f.bin": 100_000], honourRange: false)
        let target = fixture.root.appendingPathComponent("out.bin")
        // Partial data and a record as an earlier run would have left them.
        let client = try client()
        let (first, _) = try await client.data(for: fixture.request("f.bin"))
        try Data(fixture.files["f.bin"]!.prefix(40_000)).write(to: HTTPFileDownloadPaths.partial(for: target))
        let record = """
            {"url":"\(fixture.nginx.url("f.bin").absoluteString)","entityTag":\(try String(decoding: JSONEncoder().encode(first.entityTag!.headerValue), as: UTF8.self)),"completeLength":100000}
            """
        try Data(record.utf8).write(to: HTTPFileDownloadPaths.resumeRecord(for: target))
        let result = try await client.download(fixture.request("f.bin"), to: target).result()
        #expect(result.resumedFrom == 40_000 && result.restartedFromZero)
        #expect(try Data(contentsOf: target) == Data(fixture.files["f.bin"]!))
        await client.shutdown()
        await fixture.nginx.stop()
        #expect(try await fixture.nginx.settledAccessLog().last?.range == "bytes=40000-")
        #expect(try await fixture.nginx.settledAccessLog().last?.status == 200)
    }

    @Test func cancelledThenRunAgainFetchesOnlyTheMissingBytes() async throws {
        // Large enough that a reader descheduled for seconds on a loaded machine still cancels
        // before half of it has arrived.
        let size = 8_000_000
        let fixture = try await StaticOrigin.start(files: ["f.bin": size])
        let target = fixture.root.appendingPathComponent("out.bin")
        let client = try client()
        // The first run is slowed by the client (about 40 s for the whole file) and cancelled early.
        var slow = fixture.request("f.bin")
        slow.maximumReceiveRate = 200_000
        let first = client.download(slow, to: target)
        var slowProgress: [HTTPClientProgress] = []
        for await progress in first.progress {
            slowProgress.append(progress)
            if progress.bytesReceived >= 150_000 && progress.bytesPerSecond != nil { break }
        }
        // A smoothed speed of the order of the 200 KB/s the run is held to (the meter's arithmetic
        // is checked exactly in TransferSpeedMeterTests; here the reader may be descheduled).
        let speed = try #require(slowProgress.last?.bytesPerSecond)
        #expect(speed > 20_000 && speed < 2_000_000, "speed \(speed)")
        #expect(slowProgress.last?.expectedLength == Int64(size))
        first.cancel()
        await #expect(throws: HTTPClientError.cancelled) { try await first.result() }
        let partial = HTTPFileDownloadPaths.partial(for: target)
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)
            .int64Value
        #expect(kept >= 150_000 && kept < Int64(size) / 2)
        #expect(HTTPFileDownloadPaths.hasResumeRecord(for: target))

        let second = client.download(fixture.request("f.bin"), to: target)
        var values: [HTTPClientProgress] = []
        for await progress in second.progress { values.append(progress) }
        let result = try await second.result()
        #expect(result.resumedFrom == kept && result.bytesTransferred == Int64(size) - kept)
        #expect(try Data(contentsOf: target) == Data(fixture.files["f.bin"]!))
        #expect(values.last?.bytesReceived == Int64(size) && values.last?.expectedLength == Int64(size))
        // Nothing of the bookkeeping is left: no record file, no attribute on the finished file.
        #expect(!HTTPFileDownloadPaths.hasResumeRecord(for: target))
        #expect(!FileManager.default.fileExists(atPath: HTTPFileDownloadPaths.resumeRecord(for: target).path))
        #expect(ResumeRecordAttribute.read(path: target.path) == .none)
        await client.shutdown()
        await fixture.nginx.stop()
        // nginx logs a request when it ends: the cancelled one may be logged after the resumed one
        // (it notices the closed connection late on a loaded machine), so entries go by their range.
        let log = try await fixture.nginx.settledAccessLog()
        #expect(log.count == 2, "\(log)")
        #expect(log.filter { $0.range == nil }.count == 1, "\(log)")
        let resumed = try #require(log.first { $0.range != nil }, "\(log)")
        #expect(resumed.range == "bytes=\(kept)-" && resumed.status == 206)
        #expect(resumed.bytesSent == Int64(size) - kept)
    }

    @Test func aCompleteFileAnswered416IsFinishedWithoutRefetching() async throws {
        let fixture = try await StaticOrigin.start(files: ["f.bin": 5_000])
        let target = fixture.root.appendingPathComponent("out.bin")
        let client = try client()
        let (first, _) = try await client.data(for: fixture.request("f.bin"))
        // Killed after the last byte, before the rename.
        try Data(fixture.files["f.bin"]!).write(to: HTTPFileDownloadPaths.partial(for: target))
        let record = """
            {"url":"\(fixture.nginx.url("f.bin").absoluteString)","entityTag":\(try String(decoding: JSONEncoder().encode(first.entityTag!.headerValue), as: UTF8.self)),"completeLength":5000}
            """
        try Data(record.utf8).write(to: HTTPFileDownloadPaths.resumeRecord(for: target))
        let result = try await client.download(fixture.request("f.bin"), to: target).result()
        #expect(result.byteCount == 5_000 && result.bytesTransferred == 0)
        #expect(try Data(contentsOf: target) == Data(fixture.files["f.bin"]!))
        await client.shutdown()
        await fixture.nginx.stop()
        #expect(try await fixture.nginx.settledAccessLog().last?.status == 416)
    }
}
