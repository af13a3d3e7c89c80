import Foundation
import StreamKitCore
import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPClient

/// Resume and retry decisions, event → action, with no socket or file.
@Suite struct FileDownloadStateMachineTests {
    private let url = "http://o/f.mp4"
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let tag = HTTPClientRequest.IfRange.entityTag(EntityTag(opaqueTag: "v1"))
    private let policy = HTTPClientRetryPolicy(maximumAttempts: 3, initialDelay: .seconds(1), jitter: 0)

    private func head(
        _ status: Int, _ headers: HTTPHeaders, outcome: HTTPClientResponseHead.RangeOutcome
    ) -> HTTPClientResponseHead {
        HTTPClientResponseHead(status: HTTPStatus(status), headers: headers, url: url, rangeOutcome: outcome)
    }

    @Test func aFreshDownloadAsksForTheWholeFileThenResumesFromTheByteReached() {
        var machine = FileDownloadStateMachine(url: url, resume: nil, policy: policy)
        #expect(machine.nextRequest() == .init(range: nil, ifRange: nil, truncateFirst: true))
        let first = head(200, ["ETag": "\"v1\"", "Content-Length": "1000"], outcome: .notRequested)
        #expect(
            machine.headReceived(first, randomUnit: 0, now: now) == .writeBody(at: 0, truncate: true, saveRecord: true))
        machine.bodyWritten(400)
        let reset = HTTPClientError(.connectionReset, detail: "reset")
        guard case .retry(let delay, let error) = machine.attemptEnded(error: reset, randomUnit: 0, now: now) else {
            Issue.record("no retry")
            return
        }
        #expect(delay == .seconds(1) && error.byteOffset == 400 && error.expectedByteOffset == 1000)
        #expect(machine.nextRequest() == .init(range: .from(first: 400), ifRange: tag, truncateFirst: false))
        let rest = head(
            206, ["ETag": "\"v1\""], outcome: .partial(ContentRange(range: ByteRange(400, 1000), completeLength: 1000)))
        #expect(
            machine.headReceived(rest, randomUnit: 0, now: now)
                == .writeBody(at: 400, truncate: false, saveRecord: false))
        machine.bodyWritten(600)
        #expect(machine.attemptEnded(error: nil, randomUnit: 0, now: now) == .complete)
        #expect(machine.offset == 1000 && machine.attempts == 2 && !machine.restartedFromZero)
    }

    @Test func partialDataOnDiskIsResumedWithItsValidator() {
        var machine = FileDownloadStateMachine(
            url: url, resume: .init(offset: 512, validator: tag, completeLength: 2048), policy: policy)
        #expect(machine.resumedFrom == 512)
        #expect(machine.nextRequest() == .init(range: .from(first: 512), ifRange: tag, truncateFirst: false))
    }

    @Test func partialDataWithoutAValidatorIsNotTrusted() {
        var machine = FileDownloadStateMachine(
            url: url, resume: .init(offset: 512, validator: nil, completeLength: 2048), policy: policy)
        #expect(machine.resumedFrom == 0)
        #expect(machine.nextRequest() == .init(range: nil, ifRange: nil, truncateFirst: true))
    }

    @Test func aWholeBodyToAResumeStartsOverFromZero() {
        var machine = FileDownloadStateMachine(
            url: url, resume: .init(offset: 512, validator: tag, completeLength: 2048), policy: policy)
        _ = machine.nextRequest()
        let changed = head(
            200, ["ETag": "\"v2\"", "Content-Length": "3000"], outcome: .ignored(representationChanged: true))
        #expect(
            machine.headReceived(changed, randomUnit: 0, now: now)
                == .writeBody(at: 0, truncate: true, saveRecord: true))
        #expect(machine.restartedFromZero && machine.offset == 0 && machine.completeLength == 3000)
        #expect(machine.validator == .entityTag(EntityTag(opaqueTag: "v2")))
    }

    @Test func a416AtTheEndMeansTheFileIsComplete() {
        var machine = FileDownloadStateMachine(
            url: url, resume: .init(offset: 2048, validator: tag, completeLength: 2048), policy: policy)
        _ = machine.nextRequest()
        #expect(
            machine.headReceived(
                head(416, [:], outcome: .notSatisfiable(completeLength: 2048)), randomUnit: 0, now: now)
                == .complete)
    }

    @Test func a416ShortOfTheDataOnDiskStartsOver() {
        var machine = FileDownloadStateMachine(
            url: url, resume: .init(offset: 2048, validator: tag, completeLength: 2048), policy: policy)
        _ = machine.nextRequest()
        guard
            case .retry(.zero, true, let error) = machine.headReceived(
                head(416, [:], outcome: .notSatisfiable(completeLength: 1000)), randomUnit: 0, now: now)
        else {
            Issue.record("no restart")
            return
        }
        #expect(error.kind == .representationChanged)
        #expect(machine.nextRequest() == .init(range: nil, ifRange: nil, truncateFirst: false))
    }

    @Test func retryableStatusesWaitAndOthersFail() {
        var machine = FileDownloadStateMachine(url: url, resume: nil, policy: policy)
        _ = machine.nextRequest()
        let busy = head(503, ["Retry-After": "7"], outcome: .notRequested)
        guard case .retry(let delay, false, let error) = machine.headReceived(busy, randomUnit: 0, now: now) else {
            Issue.record("no retry")
            return
        }
        #expect(delay == .seconds(7) && error.status == .serviceUnavailable && error.byteOffset == nil)
        _ = machine.nextRequest()
        guard
            case .fail(let notFound) = machine.headReceived(
                head(404, [:], outcome: .notRequested), randomUnit: 0, now: now)
        else {
            Issue.record("404 retried")
            return
        }
        #expect(notFound.status == .notFound)
    }

    @Test func attemptsWithoutProgressAreLimitedAndProgressResetsTheCount() {
        var machine = FileDownloadStateMachine(url: url, resume: nil, policy: policy)
        let reset = HTTPClientError(.connectionReset)
        let whole = head(200, ["ETag": "\"v1\"", "Content-Length": "1000"], outcome: .notRequested)
        // Ten attempts that each make progress never exhaust three attempts.
        _ = machine.nextRequest()
        _ = machine.headReceived(whole, randomUnit: 0, now: now)
        for _ in 0..<10 {
            machine.bodyWritten(10)
            guard case .retry = machine.attemptEnded(error: reset, randomUnit: 0, now: now) else {
                Issue.record("gave up despite progress")
                return
            }
            _ = machine.nextRequest()
        }
        // Without progress: the second failure in a row still retries, the third gives up.
        guard case .retry = machine.attemptEnded(error: reset, randomUnit: 0, now: now) else {
            Issue.record("gave up early")
            return
        }
        _ = machine.nextRequest()
        guard case .fail(let error) = machine.attemptEnded(error: reset, randomUnit: 0, now: now) else {
            Issue.record("did not give up")
            return
        }
        #expect(error.kind == .connectionReset && error.byteOffset == 100)
    }

    @Test func aCleanEndShortOfTheLengthIsRetried() {
        var machine = FileDownloadStateMachine(url: url, resume: nil, policy: policy)
        _ = machine.nextRequest()
        _ = machine.headReceived(
            head(200, ["ETag": "\"v1\"", "Content-Length": "1000"], outcome: .notRequested), randomUnit: 0, now: now)
        machine.bodyWritten(999)
        guard case .retry(_, let error) = machine.attemptEnded(error: nil, randomUnit: 0, now: now) else {
            Issue.record("no retry")
            return
        }
        #expect(error.kind == .truncatedBody && error.byteOffset == 999)
    }
}
