import Foundation
import StreamKitCore
import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPClient

@Suite struct HTTPClientRetryPolicyTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func backoffGrowsExponentiallyUpToTheCapWithJitterBelowIt() {
        let policy = HTTPClientRetryPolicy(
            maximumAttempts: 10, initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .seconds(1), jitter: 0.5
        )
        #expect(
            (1...6).map { policy.backoff(retry: $0, randomUnit: 0) }
                == [100, 200, 400, 800, 1000, 1000].map { Duration.milliseconds($0) })
        #expect(policy.backoff(retry: 3, randomUnit: 0.5) == .milliseconds(300))
        #expect(policy.backoff(retry: 3, randomUnit: 0.999_999) == .milliseconds(200))
        var generator = SplitMix64(seed: 42)
        for retry in 1...8 {
            let delay = policy.backoff(retry: retry, randomUnit: Double.random(in: 0..<1, using: &generator))
            let ceiling = min(0.1 * pow(2, Double(retry - 1)), 1)
            #expect(delay >= .milliseconds(Int64(ceiling * 500)) && delay <= .milliseconds(Int64(ceiling * 1000)))
        }
    }

    @Test func retriesTransientFailuresAndStatusesOnly() {
        let retried: [HTTPClientError] =
            [
                HTTPClientError(.connectFailed), HTTPClientError(.connectionReset), HTTPClientError(.idleTimeout),
                HTTPClientError(.totalTimeout), HTTPClientError(.connectTimeout), HTTPClientError(.truncatedBody),
                HTTPClientError(.emptyResponse),
            ] + [408, 429, 500, 502, 503, 504].map { .unexpectedStatus(HTTPStatus($0), url: nil) }
        let never: [HTTPClientError] =
            [
                HTTPClientError(.malformedResponse), HTTPClientError(.tlsFailure), HTTPClientError(.unsupportedScheme),
                HTTPClientError(.tooManyRedirects), HTTPClientError(.contentRangeMismatch), .cancelled,
            ] + [400, 401, 403, 404, 410, 416].map { .unexpectedStatus(HTTPStatus($0), url: nil) }
        let policy = HTTPClientRetryPolicy.default
        for error in retried { #expect(policy.delay(afterAttempt: 1, error: error, randomUnit: 0, now: now) != nil) }
        for error in never { #expect(policy.delay(afterAttempt: 1, error: error, randomUnit: 0, now: now) == nil) }
    }

    @Test func theAttemptLimitHolds() {
        let policy = HTTPClientRetryPolicy(maximumAttempts: 3)
        let error = HTTPClientError(.connectFailed)
        #expect(policy.delay(afterAttempt: 2, error: error, randomUnit: 0, now: now) != nil)
        #expect(policy.delay(afterAttempt: 3, error: error, randomUnit: 0, now: now) == nil)
        #expect(HTTPClientRetryPolicy.none.delay(afterAttempt: 1, error: error, randomUnit: 0, now: now) == nil)
    }

    @Test func retryAfterInSecondsOrAsADateIsHonoured() {
        let policy = HTTPClientRetryPolicy(initialDelay: .milliseconds(100), jitter: 0, maximumRetryAfter: .seconds(60))
        let seconds = HTTPClientError.unexpectedStatus(.tooManyRequests, url: nil, retryAfter: .seconds(12))
        #expect(policy.delay(afterAttempt: 1, error: seconds, randomUnit: 0, now: now) == .seconds(12))
        let date = HTTPClientError.unexpectedStatus(
            .serviceUnavailable, url: nil, retryAfter: .date(now.addingTimeInterval(30)))
        #expect(policy.delay(afterAttempt: 1, error: date, randomUnit: 0, now: now) == .seconds(30))
        let past = HTTPClientError.unexpectedStatus(
            .serviceUnavailable, url: nil, retryAfter: .date(now.addingTimeInterval(-5)))
        #expect(policy.delay(afterAttempt: 1, error: past, randomUnit: 0, now: now) == .milliseconds(100))
        let tooLong = HTTPClientError.unexpectedStatus(.tooManyRequests, url: nil, retryAfter: .seconds(3600))
        #expect(policy.delay(afterAttempt: 1, error: tooLong, randomUnit: 0, now: now) == nil)
    }

    @Test func retryAfterParses() {
        #expect(RetryAfter(headerValue: " 120 ") == .seconds(120))
        #expect(
            RetryAfter(headerValue: "Sun, 06 Nov 1994 08:49:37 GMT")
                == .date(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")!))
        #expect(RetryAfter(headerValue: "99999999999999999999999") == .seconds(.max))
        for bad in ["", "-1", "1.5", "soon", "12 s"] { #expect(RetryAfter(headerValue: bad) == nil) }
        #expect(RetryAfter.seconds(5).delay(now: now) == .seconds(5))
    }

    @Test func recordingTimingIsReproducible() async throws {
        let recorder = HTTPClientRetryTiming.SleepRecorder()
        let first = HTTPClientRetryTiming.recording(seed: 7, recorder: recorder)
        let second = HTTPClientRetryTiming.recording(seed: 7, recorder: recorder)
        #expect((0..<5).map { _ in first.randomUnit() } == (0..<5).map { _ in second.randomUnit() })
        try await first.sleep(.seconds(3))
        #expect(recorder.recorded == [.seconds(3)])
    }
}

@Suite struct TokenBucketTests {
    @Test func ratesHoldOverTimeWithABoundedBurst() {
        let start = ContinuousClock.now
        var bucket = TokenBucket(rate: 100_000, capacity: 20_000, now: start)
        #expect(bucket.isAvailable(now: start))
        bucket.take(16_384, now: start)
        bucket.take(16_384, now: start)  // into debt: 20000 - 32768 = -12768
        #expect(!bucket.isAvailable(now: start))
        let wait = bucket.delayUntilAvailable(now: start)
        #expect(wait > .milliseconds(127) && wait < .milliseconds(129))
        #expect(bucket.isAvailable(now: start + wait))
        // Over ten simulated seconds the bytes taken match the rate, plus the burst and one chunk.
        var now = start + wait
        var taken: Int64 = 0
        while now < start + .seconds(10) {
            if bucket.isAvailable(now: now) {
                bucket.take(16_384, now: now)
                taken += 16_384
            }
            now += .milliseconds(1)
        }
        #expect(taken >= 950_000 && taken <= 1_000_000 + 20_000 + 16_384)
    }

    @Test func refillStopsAtCapacity() {
        let start = ContinuousClock.now
        var bucket = TokenBucket(rate: 1000, capacity: 5000, now: start)
        bucket.take(5000, now: start)
        #expect(!bucket.isAvailable(now: start))
        // An hour idle refills only to the capacity.
        bucket.take(5000, now: start + .seconds(3600))
        #expect(!bucket.isAvailable(now: start + .seconds(3600)))
        #expect(TokenBucket(rate: 10 << 20, now: start).capacity == (10 << 20) / 20)
        #expect(TokenBucket(rate: 1000, now: start).capacity == 16 << 10)
    }
}

@Suite struct TransferSpeedMeterTests {
    @Test func smoothsTowardsTheCurrentRate() throws {
        let start = ContinuousClock.now
        var meter = TransferSpeedMeter(smoothing: .seconds(2), minimumInterval: .milliseconds(200))
        meter.record(totalBytes: 0, at: start)
        #expect(meter.bytesPerSecond == nil)
        meter.record(totalBytes: 100, at: start + .milliseconds(100))  // too soon: merged
        #expect(meter.bytesPerSecond == nil)
        meter.record(totalBytes: 1_000_000, at: start + .seconds(1))
        #expect(meter.bytesPerSecond == 1_000_000)
        // The rate drops to 0: the average decays, and reaches near zero after a few time constants.
        meter.record(totalBytes: 1_000_000, at: start + .seconds(2))
        let afterOne = try #require(meter.bytesPerSecond)
        #expect(afterOne > 500_000 && afterOne < 700_000)  // e^(-1/2) ≈ 0.61
        meter.record(totalBytes: 1_000_000, at: start + .seconds(12))
        #expect(try #require(meter.bytesPerSecond) < 10_000)
    }

    @Test func progressFractionAndETA() {
        let progress = HTTPClientProgress(
            bytesReceived: 250, expectedLength: 1000, bytesTransferred: 100, bytesPerSecond: 50)
        #expect(progress.fractionCompleted == 0.25)
        #expect(progress.estimatedSecondsRemaining == 15)
        #expect(
            HTTPClientProgress(bytesReceived: 1, expectedLength: nil, bytesTransferred: 1, bytesPerSecond: nil)
                .fractionCompleted == nil)
    }
}

@Suite struct HTTPClientProxyTests {
    @Test func environmentVariablesPickTheProxyByScheme() {
        let environment = [
            "http_proxy": "http://p1:3128", "HTTP_PROXY": "http://evil:1", "HTTPS_PROXY": "http://p2:3128",
            "no_proxy": "localhost,.internal",
        ]
        let proxy = HTTPClientProxy.environment
        #expect(proxy.resolve(for: "http://a/x", environment: environment) == ("http://p1:3128", "localhost,.internal"))
        #expect(proxy.resolve(for: "https://a/x", environment: environment).proxy == "http://p2:3128")
        // Upper-case HTTP_PROXY alone is ignored (httpoxy); ALL_PROXY is the fallback.
        #expect(proxy.resolve(for: "http://a/x", environment: ["HTTP_PROXY": "http://evil:1"]).proxy == nil)
        #expect(
            proxy.resolve(for: "http://a/x", environment: ["ALL_PROXY": "socks5h://s:1080"]).proxy == "socks5h://s:1080"
        )
        #expect(HTTPClientProxy.none.resolve(for: "http://a/x", environment: environment) == (nil, nil))
        #expect(
            HTTPClientProxy.url("http://q:1", noProxy: "b").resolve(for: "https://a", environment: [:]) == (
                "http://q:1", "b"
            ))
    }
}

#if os(Linux)
@Suite struct CurlFailureTests {
    private func classify(
        _ code: Int, message: String = "", redirect: String? = nil, connected: Bool = true, head: Bool = false
    )
        -> HTTPClientError
    {
        CurlFailure.error(
            for: .init(
                code: code, message: message, osErrno: 0, redirectURL: redirect, connected: connected, url: "http://o/",
                headDelivered: head))
    }

    @Test func mapsLibcurlCodesToKinds() {
        #expect(
            classify(1, message: "Protocol \"file\" not supported", redirect: "file:///etc/passwd").kind
                == .unsupportedScheme)
        #expect(
            classify(1, message: "Protocol \"file\" not supported", redirect: "file:///etc/passwd").url
                == "file:///etc/passwd")
        #expect(classify(1, message: "Received HTTP/0.9 when not allowed").kind == .malformedResponse)
        #expect(classify(6).kind == .couldNotResolveHost)
        #expect(classify(7).kind == .connectFailed)
        #expect(classify(18).kind == .truncatedBody)
        #expect(classify(27, head: false).kind == .headerTooLarge)
        #expect(classify(27, head: true).kind == .transportFailure)
        #expect(classify(28, connected: false).kind == .connectTimeout)
        #expect(classify(28, connected: true).kind == .totalTimeout)
        #expect(classify(47).kind == .tooManyRedirects)
        #expect(classify(52).kind == .emptyResponse)
        #expect(classify(56).kind == .connectionReset)
        #expect(classify(60).kind == .tlsFailure)
        #expect(classify(61).kind == .contentDecodingFailed)
        #expect(classify(99).kind == .transportFailure)
    }
}
#endif
