import Foundation
import StreamKitCore
import Synchronization

/// An HTTP client: on Linux over libcurl's multi interface, where one I/O thread runs every
/// transfer of the client, connections are kept alive and shared (limited per host), and bodies
/// stream with backpressure; on Apple platforms over URLSession, behind the same API. Requests can
/// be retried by a ``HTTPClientRetryPolicy`` and files downloaded with resume.
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
    private let backend: any HTTPClientBackend
    #if canImport(Glibc)
    /// The client's own connections, for plain-http bodies written to files (next to libcurl).
    private let plain: PlainHTTPBackend?
    #endif
    private let nextTransferID = Atomic<Int>(1)

    /// Creates a client and starts its I/O (a thread for libcurl, a session for URLSession).
    ///
    /// - Parameter configuration: Defaults, limits, proxy and TLS settings, and the backend.
    /// - Throws: ``HTTPClientError`` when the backend cannot be set up (libcurl missing or failing).
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) throws {
        self.configuration = configuration
        switch configuration.backend {
        case .urlSession:
            try Self.checkDestinationsEnforceable(configuration)
            backend = URLSessionBackend(configuration: configuration)
            #if canImport(Glibc)
            plain = nil
            #endif
        case .automatic, .libcurl:
            #if canImport(CStreamKitCurl)
            backend = try CurlMultiLoop(configuration: configuration)
            #else
            guard configuration.backend == .automatic else {
                throw HTTPClientError(.transportFailure, detail: "libcurl is not available on this platform")
            }
            try Self.checkDestinationsEnforceable(configuration)
            backend = URLSessionBackend(configuration: configuration)
            #endif
            #if canImport(Glibc)
            plain = PlainHTTPBackend(configuration: configuration)
            #endif
        }
    }

    /// URLSession connects where it likes: it cannot check the addresses it connects to.
    private static func checkDestinationsEnforceable(_ configuration: HTTPClientConfiguration) throws {
        guard configuration.destinationPolicy == nil && configuration.connectHook == nil else {
            throw HTTPClientError(
                .transportFailure,
                detail: "a destination policy cannot be enforced over URLSession: use the libcurl backend")
        }
    }

    deinit {
        #if canImport(Glibc)
        plain?.requestShutdown()
        #endif
        backend.requestShutdown()
    }

    /// Cancels every transfer and stops the client's I/O; requests made afterwards fail.
    public func shutdown() async {
        #if canImport(Glibc)
        await plain?.shutdown()
        #endif
        await backend.shutdown()
    }

    /// Counters: transfers started and finished, connections opened, pauses.
    public var statistics: HTTPClientStatistics {
        var statistics = backend.statistics
        #if canImport(Glibc)
        if let plain { statistics.add(plain.statistics) }
        #endif
        return statistics
    }

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
        try await execute(request, bodyBufferLimit: configuration.bodyBufferLimit)
    }

    /// Sends `request` once, pausing the transfer while `bodyBufferLimit` body bytes wait unread.
    func execute(_ request: HTTPClientRequest, bodyBufferLimit: Int) async throws -> HTTPClientResponse {
        try request.validateURL()
        let id = nextTransferID.add(1, ordering: .relaxed).oldValue
        #if canImport(Glibc)
        if let plain, let target = plain.target(for: request),
            let response = try await plain.execute(request, target: target, id: id, bodyBufferLimit: bodyBufferLimit)
        {
            return response
        }
        #endif
        return try await backend.execute(request, id: id, bodyBufferLimit: bodyBufferLimit)
    }
}

/// What carries an ``HTTPClient``'s requests: libcurl's multi interface, or URLSession.
protocol HTTPClientBackend: Sendable {
    /// Sends `request` (its URL already checked) as transfer `id`; returns at the final head. The
    /// transfer pauses while `bodyBufferLimit` body bytes wait unread.
    func execute(_ request: HTTPClientRequest, id: Int, bodyBufferLimit: Int) async throws -> HTTPClientResponse
    /// Cancels every transfer and waits until the backend stopped.
    func shutdown() async
    /// Asks the backend to stop, without waiting (for `deinit`).
    func requestShutdown()
    /// Counters since the backend started.
    var statistics: HTTPClientStatistics { get }
}

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
        try await retrying(request, policy: policy, send: { try await execute(request) }, finish: { $0 })
    }

    /// Fetches a small body whole, retrying by `policy` (408, 429 and 5xx responses, transport
    /// failures, and bodies cut short, all counted against the same attempts).
    ///
    /// The body is buffered up to `limit` from the first byte without pausing the transfer, so a
    /// transfer (a rate-limited one included) runs at its own pace however late the calling task
    /// is scheduled to collect it.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - limit: The most body bytes accepted.
    ///   - policy: When to retry.
    /// - Returns: The response head and body, whatever the status (the last one when attempts ran
    ///   out on retryable statuses).
    /// - Throws: ``HTTPClientError``: the last failure, or `bodyTooLarge`.
    public func data(
        for request: HTTPClientRequest, limit: Int = 16 << 20, retry policy: HTTPClientRetryPolicy = .none
    ) async throws -> (head: HTTPClientResponseHead, body: [UInt8]) {
        // The body is held whole anyway: a smaller buffer would pause the transfer until this task
        // is scheduled again, once per buffer.
        try await retrying(
            request, policy: policy,
            send: { try await execute(request, bodyBufferLimit: max(configuration.bodyBufferLimit, limit)) },
            finish: { response in
                do {
                    return (response.head, try await response.body.collect(upTo: limit))
                } catch let error as HTTPClientError {
                    throw error.with(url: response.url)
                }
            })
    }

    /// Sends until a response is not retried, then gives what `finish` makes of it. A retryable
    /// status is retried while `policy` allows (its body discarded), and so is a failure to send
    /// or to finish (a body cut short), all counted against the same attempts.
    private func retrying<Result>(
        _ request: HTTPClientRequest, policy: HTTPClientRetryPolicy,
        send: () async throws -> HTTPClientResponse,
        finish: (HTTPClientResponse) async throws -> Result
    ) async throws -> Result {
        let timing = configuration.retryTiming
        var attempt = 1
        while true {
            do {
                let response = try await send()
                guard HTTPClientRetryPolicy.isRetryable(status: response.status),
                    let delay = policy.delay(
                        afterAttempt: attempt,
                        error: .unexpectedStatus(
                            response.status, url: response.url, retryAfter: response.head.retryAfter),
                        randomUnit: timing.randomUnit(), now: timing.now())
                else { return try await finish(response) }
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

    func sleep(_ delay: Duration, timing: HTTPClientRetryTiming, url: String) async throws {
        do {
            try await timing.sleep(delay)
        } catch {
            throw HTTPClientError(.cancelled, url: url, detail: "cancelled while waiting to retry")
        }
        if Task.isCancelled { throw HTTPClientError(.cancelled, url: url, detail: "cancelled while waiting to retry") }
    }
}
