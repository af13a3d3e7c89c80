import Core
import Foundation
import Synchronization

#if canImport(CCurl)
/// An HTTP client over libcurl's multi interface: one I/O thread runs every transfer of the
/// client, connections are kept alive and shared (limited per host), bodies stream with
/// backpressure, and requests can be retried by a ``HTTPClientRetryPolicy``.
///
/// ```swift
/// let client = try HTTPClient()
/// let response = try await client.execute(HTTPClientRequest(url: "https://example.com/a.ts"))
/// for try await chunk in response.body { ... }
/// await client.shutdown()
/// ```
///
/// Only http and https are fetched, at every redirect hop. TLS is verified unless the
/// configuration turns it off. Dropping the client shuts it down (cancelling its transfers).
public final class HTTPClient: Sendable {
    /// What every request gets unless it says otherwise.
    public let configuration: HTTPClientConfiguration
    private let loop: CurlMultiLoop
    private let nextTransferID = Atomic<Int>(1)

    /// Creates a client and starts its I/O thread.
    ///
    /// - Parameter configuration: Defaults, limits, proxy and TLS settings.
    /// - Throws: ``HTTPClientError`` when libcurl cannot be initialized.
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) throws {
        self.configuration = configuration
        loop = try CurlMultiLoop(configuration: configuration)
    }

    deinit { loop.requestShutdown() }

    /// Cancels every transfer and stops the I/O thread; requests made afterwards fail.
    public func shutdown() async { await loop.shutdown() }

    /// Counters: transfers started and finished, connections opened, pauses.
    public var statistics: HTTPClientStatistics { loop.statistics }

    /// Sends `request` once and returns as soon as the final response head has arrived.
    ///
    /// The body then streams from ``HTTPClientResponse/body``. A non-2xx status is not an error here.
    ///
    /// - Parameter request: The request.
    /// - Returns: The response.
    /// - Throws: ``HTTPClientError`` when no response head arrived (connect failure, timeout,
    ///   reset, malformed response, refused redirect, range mismatch), or `cancelled` when the
    ///   task is cancelled.
    public func execute(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let id = nextTransferID.add(1, ordering: .relaxed).oldValue
        let transfer = try CurlTransfer(id: id, request: request, configuration: configuration, loop: loop)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<HTTPClientResponse, any Error>) in
                transfer.headContinuation = continuation
                if !loop.start(transfer) {
                    transfer.headContinuation = nil
                    continuation.resume(
                        throwing: HTTPClientError(.cancelled, url: request.url, detail: "the HTTP client shut down"))
                }
            }
        } onCancel: {
            transfer.cancelRequested.store(true, ordering: .releasing)
            loop.cancelTransfer(id, error: .cancelled)
        }
    }
}
#endif

extension HTTPClient {
    /// Sends `request`, retrying by `policy` until a response head arrives whose status is not
    /// retryable (408, 429 and 5xx are; their bodies are discarded), or the policy gives up.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - policy: When to retry.
    /// - Returns: The first response with a status that is not retryable, or the last response
    ///   when attempts ran out on retryable statuses.
    /// - Throws: The last ``HTTPClientError`` when attempts ran out on transport failures.
    public func execute(
        _ request: HTTPClientRequest, retry policy: HTTPClientRetryPolicy
    ) async throws
        -> HTTPClientResponse
    {
        let timing = configuration.retryTiming
        var attempt = 1
        while true {
            do {
                let response = try await execute(request)
                guard HTTPClientRetryPolicy.isRetryable(status: response.status) else { return response }
                let error = HTTPClientError.unexpectedStatus(
                    response.status, url: response.url, retryAfter: response.head.retryAfter)
                guard
                    let delay = policy.delay(
                        afterAttempt: attempt, error: error, randomUnit: timing.randomUnit(), now: timing.now())
                else { return response }
                response.body.reader.cancel()
                try await sleep(delay, timing: timing, url: request.url)
            } catch let error as HTTPClientError {
                guard
                    let delay = policy.delay(
                        afterAttempt: attempt, error: error, randomUnit: timing.randomUnit(), now: timing.now())
                else { throw error }
                try await sleep(delay, timing: timing, url: request.url)
            }
            attempt += 1
        }
    }

    /// Fetches a small body whole, retrying by `policy` (a cut body is fetched again).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - limit: The most body bytes accepted.
    ///   - policy: When to retry.
    /// - Returns: The response head and body, whatever the status (after retries on 408, 429, 5xx).
    /// - Throws: ``HTTPClientError``: the last failure, or `bodyTooLarge`.
    public func data(
        for request: HTTPClientRequest, limit: Int = 16 << 20, retry policy: HTTPClientRetryPolicy = .none
    ) async throws -> (head: HTTPClientResponseHead, body: [UInt8]) {
        let timing = configuration.retryTiming
        var attempt = 1
        while true {
            let response = try await execute(request, retry: policy)
            do {
                return (response.head, try await response.body.collect(upTo: limit))
            } catch let error as HTTPClientError {
                guard
                    let delay = policy.delay(
                        afterAttempt: attempt, error: error, randomUnit: timing.randomUnit(), now: timing.now())
                else { throw error.with(url: response.url) }
                try await sleep(delay, timing: timing, url: request.url)
            }
            attempt += 1
        }
    }

    func sleep(_ delay: Duration, timing: HTTPClientRetryTiming, url: String) async throws {
        do {
            try await timing.sleep(delay)
        } catch {
            throw HTTPClientError(.cancelled, url: url, detail: "cancelled while waiting to retry")
        }
        if Task.isCancelled { throw HTTPClientError(.cancelled, url: url, detail: "cancelled while waiting to retry") }
    }
}
