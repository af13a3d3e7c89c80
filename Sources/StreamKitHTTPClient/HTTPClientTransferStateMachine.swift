/// The lifecycle of one transfer, from the first header line to the end of the body, as a pure
/// state machine: the I/O edge feeds it libcurl's events and performs the actions it returns.
///
/// It decides when the head of the final response is known (a 3xx may be followed, so its head
/// waits for the first body byte or the end), checks the response against the requested range,
/// counts body bytes to detect truncation with the offset reached, and keeps the idle deadline
/// (suspended while the body is paused by a slow consumer or a rate limit).
import StreamKitHTTP

struct HTTPClientTransferStateMachine: Sendable {
    /// What the request expects of the response.
    struct Expectation: Sendable {
        var url: String
        var range: RangeRequest.Specifier?
        var ifRange: HTTPClientRequest.IfRange?
        var expectsBody: Bool
        var idleTimeout: Duration?
    }

    /// Where the response is.
    enum State: Sendable {
        /// Header lines are arriving; no final head yet.
        case awaitingHead(HTTPClientResponseHeadParser)
        /// The head went to the caller; body bytes are counted (``bodyBytesReceived``).
        case streaming(HTTPClientResponseHead)
        /// The transfer is being aborted for this reason; the completion reports it.
        case aborting(HTTPClientError, head: HTTPClientResponseHead?)
        /// Done: the outcome was reported.
        case finished
    }

    /// After a header line.
    enum HeaderAction: Equatable, Sendable {
        case none
        /// The final head: give it to the caller.
        case deliverHead(HTTPClientResponseHead)
        /// Abort the transfer (the error is reported at completion).
        case abort(HTTPClientError)
    }

    /// Before body bytes are accepted.
    enum BodyAction: Equatable, Sendable {
        /// Accept them.
        case accept
        /// The head is final now: give it to the caller, then accept.
        case deliverHeadThenAccept(HTTPClientResponseHead)
        /// Abort the transfer.
        case abort(HTTPClientError)
    }

    /// At the end of the transfer, or on cancellation.
    enum EndAction: Equatable, Sendable {
        case none
        /// The caller is still waiting for the head: fail it.
        case failHead(HTTPClientError)
        /// Deliver the head (the body is empty or complete) and end the body with `bodyError`.
        case deliverHeadAndFinish(HTTPClientResponseHead, bodyError: HTTPClientError?)
        /// End the body the caller is reading, with an error or cleanly.
        case finishBody(HTTPClientError?)
    }

    /// A redirect hop's facts that only libcurl knows: the URL the latest response came from.
    typealias EffectiveURL = () -> String

    let expectation: Expectation
    private(set) var state: State = .awaitingHead(HTTPClientResponseHeadParser())
    /// Body bytes accepted so far (kept out of `state` so that counting copies nothing).
    private(set) var bodyBytesReceived: Int64 = 0
    private var lastActivity: ContinuousClock.Instant
    private var isPaused = false

    /// Creates the machine for a request submitted at `now`.
    init(expectation: Expectation, now: ContinuousClock.Instant) {
        self.expectation = expectation
        self.lastActivity = now
    }

    /// Whether the head went to the caller.
    var headDelivered: Bool {
        switch state {
        case .streaming: true
        case .aborting(_, let head): head != nil
        case .awaitingHead, .finished: false
        }
    }

    // MARK: Events

    /// A header line arrived (libcurl's header callback).
    mutating func headerLine(
        _ line: some BidirectionalCollection<UInt8>, now: ContinuousClock.Instant, url: EffectiveURL
    )
        -> HeaderAction
    {
        lastActivity = now
        guard case .awaitingHead(var parser) = state else { return .none }  // trailers, or aborting
        let result = parser.feed(line: line)
        state = .awaitingHead(parser)
        switch result {
        case .needMore:
            return .none
        case .malformed(let reason):
            let error = HTTPClientError(.malformedResponse, url: url(), detail: reason)
            state = .aborting(error, head: nil)
            return .abort(error)
        case .complete(let head):
            // Interim responses are followed by the real one; a redirect may be followed by
            // libcurl, which then ignores its body: both wait.
            if head.status.rawValue < 200 || head.status.isRedirection { return .none }
            switch finalize(parser: parser, url: url()) {
            case .success(let final):
                state = .streaming(final)
                return .deliverHead(final)
            case .failure(let error):
                state = .aborting(error, head: nil)
                return .abort(error)
            }
        }
    }

    /// A whole response head arrived at once (URLSession), after `redirects` followed redirects.
    mutating func responseHead(
        _ head: HTTPClientResponseHeadParser.Head, redirects: Int, now: ContinuousClock.Instant, url: String
    ) -> HeaderAction {
        lastActivity = now
        guard case .awaitingHead = state else { return .none }
        let result = RangeResponseCheck.outcome(
            requested: expectation.range, ifRange: expectation.ifRange, status: head.status, headers: head.headers,
            url: url)
        switch result {
        case .success(let outcome):
            let final = HTTPClientResponseHead(
                status: head.status, version: head.version, reasonPhrase: head.reasonPhrase, headers: head.headers,
                url: url, redirectCount: redirects, rangeOutcome: outcome)
            state = .streaming(final)
            return .deliverHead(final)
        case .failure(let error):
            state = .aborting(error, head: nil)
            return .abort(error)
        }
    }

    /// Body bytes are about to be accepted (libcurl's write callback, before buffering).
    mutating func bodyWillArrive(now: ContinuousClock.Instant, url: EffectiveURL) -> BodyAction {
        lastActivity = now
        switch state {
        case .streaming:
            return .accept
        case .awaitingHead(let parser):
            // A body for a 3xx that libcurl did not follow: that head is final.
            switch finalize(parser: parser, url: url()) {
            case .success(let final):
                state = .streaming(final)
                return .deliverHeadThenAccept(final)
            case .failure(let error):
                state = .aborting(error, head: nil)
                return .abort(error)
            }
        case .aborting(let error, _):
            return .abort(error)
        case .finished:
            return .abort(.cancelled)
        }
    }

    /// `count` body bytes were accepted into the consumer's buffer.
    mutating func bodyAccepted(_ count: Int, now: ContinuousClock.Instant) {
        lastActivity = now
        bodyBytesReceived += Int64(count)
    }

    /// The edge must abort the transfer for `error` (a body write failed): the end reports it.
    mutating func abort(_ error: HTTPClientError) {
        switch state {
        case .awaitingHead: state = .aborting(error, head: nil)
        case .streaming(let head): state = .aborting(error, head: head)
        case .aborting, .finished: break
        }
    }

    /// The transfer ended (libcurl's done message): `failure` is nil when libcurl saw success.
    mutating func completed(failure: HTTPClientError?, url: EffectiveURL) -> EndAction {
        switch state {
        case .finished:
            return .none
        case .aborting(let error, let head):
            state = .finished
            return head == nil ? .failHead(error) : .finishBody(error)
        case .awaitingHead(let parser):
            state = .finished
            if let failure { return .failHead(failure.with(url: url())) }
            switch finalize(parser: parser, url: url()) {
            case .success(let head):
                return .deliverHeadAndFinish(head, bodyError: truncation(head: head, received: 0))
            case .failure(let error):
                return .failHead(error)
            }
        case .streaming(let head):
            state = .finished
            let received = bodyBytesReceived
            let reached = head.bodyOffset + received
            if let failure {
                if failure.kind == .truncatedBody || failure.byteOffset == nil {
                    return .finishBody(
                        HTTPClientError(
                            failure.kind, url: failure.url ?? head.url, status: head.status, byteOffset: reached,
                            expectedByteOffset: expectedEnd(of: head), detail: failure.detail))
                }
                return .finishBody(failure)
            }
            return .finishBody(truncation(head: head, received: received))
        }
    }

    /// The transfer is being stopped by the client (cancellation, idle timeout, shutdown).
    mutating func cancel(_ error: HTTPClientError) -> EndAction {
        switch state {
        case .finished:
            return .none
        case .awaitingHead, .aborting(_, nil):
            state = .finished
            return .failHead(error.with(url: expectation.url))
        case .streaming(let head), .aborting(_, let head?):
            state = .finished
            return .finishBody(
                HTTPClientError(
                    error.kind, url: error.url ?? head.url, status: head.status,
                    byteOffset: head.bodyOffset + bodyBytesReceived, expectedByteOffset: expectedEnd(of: head),
                    detail: error.detail))
        }
    }

    // MARK: Idle timeout

    /// The body was paused (a full consumer buffer or the rate limit): idle time stops counting.
    mutating func paused(now: ContinuousClock.Instant) {
        isPaused = true
        lastActivity = now
    }

    /// The body was resumed: idle time counts again from now.
    mutating func resumed(now: ContinuousClock.Instant) {
        isPaused = false
        lastActivity = now
    }

    /// When the transfer times out for want of bytes, or `nil` (no idle timeout, paused, or done).
    var idleDeadline: ContinuousClock.Instant? {
        guard let idle = expectation.idleTimeout, !isPaused else { return nil }
        if case .finished = state { return nil }
        return lastActivity + idle
    }

    /// The idle-timeout error if the deadline has passed at `now`.
    func idleTimeoutError(now: ContinuousClock.Instant) -> HTTPClientError? {
        guard let deadline = idleDeadline, now >= deadline, let idle = expectation.idleTimeout else { return nil }
        return HTTPClientError(.idleTimeout, detail: "no data for \(idle)")
    }

    // MARK: Private

    private func finalize(
        parser: HTTPClientResponseHeadParser, url: String
    ) -> Result<HTTPClientResponseHead, HTTPClientError> {
        guard let last = parser.lastHead else {
            return .failure(HTTPClientError(.malformedResponse, url: url, detail: "no response head"))
        }
        let redirects = parser.completedHeads.dropLast().filter { $0.status.isRedirection }.count
        return RangeResponseCheck.outcome(
            requested: expectation.range, ifRange: expectation.ifRange, status: last.status, headers: last.headers,
            url: url
        ).map { outcome in
            HTTPClientResponseHead(
                status: last.status, version: last.version, reasonPhrase: last.reasonPhrase, headers: last.headers,
                url: url, redirectCount: redirects, rangeOutcome: outcome)
        }
    }

    private func expectedEnd(of head: HTTPClientResponseHead) -> Int64? {
        guard expectation.expectsBody, !head.isContentEncoded else { return nil }
        return head.expectedBodyEnd
    }

    /// A body that ended cleanly but short of its announced end (libcurl checks Content-Length
    /// itself; this also covers Content-Range and bodies cut at a chunk boundary).
    private func truncation(head: HTTPClientResponseHead, received: Int64) -> HTTPClientError? {
        guard let end = expectedEnd(of: head), head.status != .notModified, head.status != .noContent else {
            return nil
        }
        let reached = head.bodyOffset + received
        guard reached < end else { return nil }
        return .truncatedBody(url: head.url, reached: reached, expected: end)
    }
}
