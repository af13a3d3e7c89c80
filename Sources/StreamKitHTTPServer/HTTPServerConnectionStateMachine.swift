/// The life of one server connection as a state machine, with no I/O: bytes in, requests out,
/// and when to answer, keep the connection, linger or close (RFC 9112 §9).
///
/// Requests are taken one at a time: while one is being answered, later pipelined requests stay
/// buffered in the parser, so responses go out in request order (RFC 9112 §9.3.2). The owner
/// feeds events (`received`, `inputEnded`, `responseFinished`, `tick`, `shutdown`) and performs
/// the actions ``nextAction(now:)`` returns until it says ``Action/wait``.
import StreamKitHTTP

struct HTTPServerConnectionStateMachine: Sendable {
    /// How long each phase may take.
    struct Timeouts: Hashable, Sendable {
        /// A kept-alive connection with no request in progress is closed after this. A new one
        /// that has not sent a byte gets the shorter of this and `request`: a client that only
        /// opens connections holds them no longer than one that sends slowly.
        var idle: Duration
        /// A request's head and body must arrive within this from its first byte (or from
        /// the connection's start): a client that sends a byte a second is cut off.
        var request: Duration
        /// A response that cannot write a byte for this long is abandoned.
        var send: Duration
        /// After an error response, input is read and dropped for at most this long before
        /// closing, so that the client reads the response rather than a reset.
        var linger: Duration
    }

    /// What the owner does next.
    enum Action: Hashable, Sendable {
        /// Nothing until the next event.
        case wait
        /// Write `HTTP/1.1 100 Continue` (the client waits for it before sending the body).
        case sendContinue
        /// Answer this request; call ``responseFinished(now:)`` once the response is written.
        case dispatch(HTTPServerRequestHead, body: [UInt8])
        /// Answer with this error status and close once it is written (the request was malformed,
        /// too large, or too slow).
        case reject(HTTPStatus)
        /// Close the connection now.
        case close
        /// Shut down the sending side and drop input until the peer closes or the linger time passes.
        case lingerThenClose
    }

    private enum State: Hashable, Sendable {
        /// Between requests, nothing buffered.
        case idle(since: ContinuousClock.Instant)
        /// Bytes of a request arrived; its head or body is incomplete.
        case receiving(since: ContinuousClock.Instant)
        /// A request is being answered; `closeAfter` once decided when the response head is sent.
        case responding(keepAlive: Bool, rejecting: Bool)
        /// Sending side shut down after a final response; input is dropped until `until`.
        case lingering(until: ContinuousClock.Instant)
        case closed
    }

    let timeouts: Timeouts
    private var parser: HTTPRequestParser
    private var state: State
    private var pendingHead: HTTPServerRequestHead?
    private var pendingBody: [UInt8] = []
    private var continueSent = false
    private var inputHasEnded = false
    private var shuttingDown = false
    private var writeBlockedSince: ContinuousClock.Instant?
    private var answeredRequests = 0

    /// At most this many bytes of later pipelined requests are buffered while one is answered;
    /// past it the owner stops reading (backpressure on the client).
    static let maximumBufferedPipelineBytes = 64 * 1024

    init(limits: HTTPRequestParser.Limits, timeouts: Timeouts, now: ContinuousClock.Instant) {
        self.parser = HTTPRequestParser(limits: limits)
        self.timeouts = timeouts
        self.state = .idle(since: now)
    }

    /// Whether the owner should read from the socket now.
    var wantsInput: Bool {
        switch state {
        case .idle, .receiving, .lingering: true
        case .responding: parser.bufferedByteCount < Self.maximumBufferedPipelineBytes
        case .closed: false
        }
    }

    /// Whether the connection is closed.
    var isClosed: Bool { state == .closed }

    /// Whether the connection is between requests with nothing of the next one received.
    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Whether a response is being produced or written.
    var isResponding: Bool {
        if case .responding = state { return true }
        return false
    }

    // MARK: Events

    /// Bytes arrived from the client.
    mutating func received(_ bytes: UnsafeRawBufferPointer, now: ContinuousClock.Instant) {
        switch state {
        case .idle:
            state = .receiving(since: now)
            parser.feed(bytes)
        case .receiving, .responding:
            parser.feed(bytes)
        case .lingering, .closed:
            break  // dropped
        }
    }

    /// Convenience for tests and callers holding an array.
    mutating func received(_ bytes: [UInt8], now: ContinuousClock.Instant) {
        bytes.withUnsafeBytes { received($0, now: now) }
    }

    /// The client closed its sending side (read returned 0).
    mutating func inputEnded() {
        inputHasEnded = true
    }

    /// The response about to be sent ends only when the connection closes (a stream to an
    /// HTTP/1.0 client), so the connection cannot stay open after it.
    mutating func forbidKeepAlive() {
        guard case .responding(_, let rejecting) = state else { return }
        state = .responding(keepAlive: false, rejecting: rejecting)
    }

    /// The owner is about to send a response head: whether the connection stays open after it.
    /// The answer is final for this response (it decides `Connection: close`).
    mutating func responseHeadWillBeSent() -> Bool {
        guard case .responding(let keepAlive, let rejecting) = state else { return false }
        let keep = keepAlive && !rejecting && !shuttingDown && !inputHasEnded
        state = .responding(keepAlive: keep, rejecting: rejecting)
        return keep
    }

    /// The response is completely written.
    mutating func responseFinished(now: ContinuousClock.Instant) -> Action {
        guard case .responding(let keepAlive, let rejecting) = state else { return .wait }
        writeBlockedSince = nil
        answeredRequests += 1
        if rejecting || (!keepAlive && parser.bufferedByteCount > 0 && !inputHasEnded) {
            state = .lingering(until: now + timeouts.linger)
            return .lingerThenClose
        }
        guard keepAlive && !shuttingDown && !inputHasEnded else {
            state = .closed
            return .close
        }
        state = parser.isInsideRequest ? .receiving(since: now) : .idle(since: now)
        return nextAction(now: now)
    }

    /// A write could not complete (the socket's buffer is full).
    mutating func writeBlocked(now: ContinuousClock.Instant) {
        if writeBlockedSince == nil { writeBlockedSince = now }
    }

    /// A write made progress.
    mutating func writeProgressed() {
        writeBlockedSince = nil
    }

    /// Time passed: close or reject when the phase's timeout has run out.
    mutating func tick(now: ContinuousClock.Instant) -> Action {
        switch state {
        case .idle(let since):
            let limit = answeredRequests == 0 ? min(timeouts.idle, timeouts.request) : timeouts.idle
            if now - since >= limit {
                state = .closed
                return .close
            }
        case .receiving(let since):
            if now - since >= timeouts.request {
                state = .responding(keepAlive: false, rejecting: true)
                return .reject(.requestTimeout)
            }
        case .responding:
            if let blocked = writeBlockedSince, now - blocked >= timeouts.send {
                state = .closed
                return .close
            }
        case .lingering(let until):
            if now >= until {
                state = .closed
                return .close
            }
        case .closed:
            break
        }
        return .wait
    }

    /// The server is stopping: close between requests, finish the request being answered.
    mutating func shutdown() -> Action {
        shuttingDown = true
        switch state {
        case .idle, .receiving:
            state = .closed
            return .close
        case .responding, .lingering, .closed:
            return .wait
        }
    }

    /// The connection was closed by the owner (an I/O error, or after ``Action/close``).
    mutating func closed() {
        state = .closed
    }

    // MARK: Actions

    /// The next thing to do; call until it returns ``Action/wait``.
    mutating func nextAction(now: ContinuousClock.Instant) -> Action {
        switch state {
        case .idle, .receiving:
            return parseNext(now: now)
        case .responding:
            return .wait
        case .lingering:
            if inputHasEnded {
                state = .closed
                return .close
            }
            return .wait
        case .closed:
            return .wait
        }
    }

    private mutating func parseNext(now: ContinuousClock.Instant) -> Action {
        while true {
            let event: HTTPRequestParser.Event?
            do {
                event = try parser.next()
            } catch {
                state = .responding(keepAlive: false, rejecting: true)
                return .reject(error.status)
            }
            switch event {
            case .head(let head):
                pendingHead = head
                pendingBody = []
                continueSent = false
            case .body(let bytes):
                pendingBody += bytes
            case .end:
                guard let head = pendingHead else { preconditionFailure("end of a request without a head") }
                pendingHead = nil
                let body = pendingBody
                pendingBody = []
                state = .responding(keepAlive: head.keepAlive, rejecting: false)
                return .dispatch(head, body: body)
            case nil:
                if let head = pendingHead, head.expectsContinue, !continueSent, !inputHasEnded {
                    continueSent = true
                    return .sendContinue
                }
                if inputHasEnded {
                    // The client stopped sending: between requests that is a normal close; in the
                    // middle of one there is nobody left to answer.
                    state = .closed
                    return .close
                }
                if case .idle = state, parser.isInsideRequest { state = .receiving(since: now) }
                if case .receiving = state, !parser.isInsideRequest { state = .idle(since: now) }
                return .wait
            }
        }
    }
}
