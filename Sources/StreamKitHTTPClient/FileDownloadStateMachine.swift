import Foundation
import StreamKitHTTP

/// A download into a file that resumes: from bytes already on disk when it starts, and from the
/// byte it reached when an attempt fails, never from zero unless the server forces it. A pure
/// state machine: the executor (``HTTPClient/download(_:to:options:)``) performs its actions.
///
/// Every resumed request carries `If-Range` with the representation's validator, so a changed
/// file comes back whole with 200 and is written from byte zero (the partial data is dropped)
/// rather than spliced onto the old version. The same happens when a server ignores `Range`.
/// With no validator at all, partial data cannot be checked and is not resumed.
struct FileDownloadStateMachine: Sendable {
    /// What is known about data already on disk.
    struct ResumePoint: Hashable, Sendable {
        /// Bytes on disk, from offset 0 without gaps.
        var offset: Int64
        /// The representation's validator when those bytes were fetched.
        var validator: HTTPClientRequest.IfRange?
        /// The representation's length, when known.
        var completeLength: Int64?
    }

    /// The next request to send.
    struct RequestPlan: Hashable, Sendable {
        /// The range to ask for (`nil`: the whole representation).
        var range: RangeRequest.Specifier?
        /// The validator the range depends on.
        var ifRange: HTTPClientRequest.IfRange?
        /// Whether the data on disk must be dropped first.
        var truncateFirst: Bool
    }

    /// What to do with a response head.
    enum HeadAction: Hashable, Sendable {
        /// Write the body at `offset`; drop data on disk past it first when `truncate`; persist
        /// the resume record first when `saveRecord` (the validator or length is new).
        case writeBody(at: Int64, truncate: Bool, saveRecord: Bool)
        /// The file is already complete (a 416 whose length is exactly the bytes on disk).
        case complete
        /// Discard this response and retry after the delay (`truncate`: start over from zero).
        case retry(after: Duration, truncate: Bool, error: HTTPClientError)
        /// Give up.
        case fail(HTTPClientError)
    }

    /// What to do when an attempt ended.
    enum EndAction: Hashable, Sendable {
        case complete
        case retry(after: Duration, error: HTTPClientError)
        case fail(HTTPClientError)
    }

    let policy: HTTPClientRetryPolicy
    let url: String
    /// Bytes on disk: the next byte to write.
    private(set) var offset: Int64
    /// The validator of the representation being written.
    private(set) var validator: HTTPClientRequest.IfRange?
    /// The representation's length, when known.
    private(set) var completeLength: Int64?
    /// Where this run started (bytes already on disk that were kept).
    let resumedFrom: Int64
    /// Whether the server forced a restart from zero (Range ignored, or the representation changed).
    private(set) var restartedFromZero = false
    /// Attempts made.
    private(set) var attempts = 0
    /// Failures since the last attempt that made progress (or in all, per the policy).
    private var failuresInARow = 0
    private var progressThisAttempt = false

    /// Creates the machine, resuming from `resume` when it can be checked.
    init(url: String, resume: ResumePoint?, policy: HTTPClientRetryPolicy) {
        self.url = url
        self.policy = policy
        if let resume, resume.offset > 0, resume.validator != nil {
            offset = resume.offset
            validator = resume.validator
            completeLength = resume.completeLength
        } else {
            offset = 0
        }
        resumedFrom = offset
    }

    /// The request for the next attempt.
    mutating func nextRequest() -> RequestPlan {
        attempts += 1
        progressThisAttempt = false
        if offset > 0, let validator {
            return RequestPlan(range: .from(first: offset), ifRange: validator, truncateFirst: false)
        }
        let truncate = offset > 0 || attempts == 1
        offset = 0
        return RequestPlan(range: nil, ifRange: nil, truncateFirst: truncate)
    }

    /// The response head of the current attempt arrived.
    mutating func headReceived(_ head: HTTPClientResponseHead, randomUnit: Double, now: Date) -> HeadAction {
        switch head.rangeOutcome {
        case .partial(let contentRange):
            // Checked against the request already: it starts at `offset`.
            let saveRecord = completeLength != contentRange.completeLength || validator == nil
            completeLength = contentRange.completeLength ?? completeLength
            if validator == nil { validator = head.ifRangeValidator }
            return .writeBody(at: offset, truncate: false, saveRecord: saveRecord)
        case .notSatisfiable(let length):
            if let length, length == offset, offset > 0 {
                completeLength = length
                return .complete
            }
            // Shorter than what is on disk: a different file now. Start over.
            startOver()
            return .retry(
                after: .zero, truncate: true,
                error: HTTPClientError(
                    .representationChanged, url: head.url, status: head.status,
                    detail: "416 at byte \(offset): the file changed, starting over"))
        case .ignored, .notRequested:
            if head.status.isSuccess {
                if offset > 0 { restartedFromZero = true }
                offset = 0
                validator = head.ifRangeValidator
                completeLength = head.completeLength
                return .writeBody(at: 0, truncate: true, saveRecord: true)
            }
            return failure(
                .unexpectedStatus(head.status, url: head.url, retryAfter: head.retryAfter), randomUnit: randomUnit,
                now: now)
        case .notApplicable:
            return failure(
                .unexpectedStatus(head.status, url: head.url, retryAfter: head.retryAfter), randomUnit: randomUnit,
                now: now)
        }
    }

    /// `count` body bytes were written at the offset.
    mutating func bodyWritten(_ count: Int) {
        guard count > 0 else { return }
        offset += Int64(count)
        progressThisAttempt = true
    }

    /// The current attempt ended: cleanly (`error` nil) or not (including failures before a head).
    mutating func attemptEnded(error: HTTPClientError?, randomUnit: Double, now: Date) -> EndAction {
        var error = error
        if error == nil, let completeLength {
            if offset < completeLength {
                error = .truncatedBody(url: url, reached: offset, expected: completeLength)
            } else if offset > completeLength {
                return .fail(
                    HTTPClientError(
                        .malformedResponse, url: url, byteOffset: offset,
                        detail: "received \(offset) bytes of a \(completeLength)-byte file"))
            }
        }
        guard let error else { return .complete }
        switch failure(error, randomUnit: randomUnit, now: now) {
        case .retry(let delay, _, let error): return .retry(after: delay, error: error)
        case .fail(let error): return .fail(error)
        case .writeBody, .complete: return .fail(error)
        }
    }

    private mutating func startOver() {
        offset = 0
        validator = nil
        completeLength = nil
        restartedFromZero = true
    }

    private mutating func failure(_ error: HTTPClientError, randomUnit: Double, now: Date) -> HeadAction {
        if progressThisAttempt && policy.progressResetsAttempts { failuresInARow = 0 }
        failuresInARow += 1
        var error = error.with(url: url)
        if error.byteOffset == nil && error.kind != .unexpectedStatus {
            // Where the file stands, for the message and for the caller.
            error = HTTPClientError(
                error.kind, url: error.url, status: error.status, byteOffset: offset,
                expectedByteOffset: error.expectedByteOffset ?? completeLength, retryAfter: error.retryAfter,
                detail: error.detail)
        }
        guard let delay = policy.delay(afterAttempt: failuresInARow, error: error, randomUnit: randomUnit, now: now)
        else { return .fail(error) }
        return .retry(after: delay, truncate: false, error: error)
    }
}
