import StreamKitCore
import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPClient

/// Event → action tables for the transfer lifecycle, with no socket.
@Suite struct HTTPClientTransferStateMachineTests {
    private let start = ContinuousClock.now
    private let url = "http://origin/file"

    private func machine(
        range: RangeRequest.Specifier? = nil, ifRange: HTTPClientRequest.IfRange? = nil, expectsBody: Bool = true,
        idle: Duration? = .seconds(5)
    ) -> HTTPClientTransferStateMachine {
        HTTPClientTransferStateMachine(
            expectation: .init(url: url, range: range, ifRange: ifRange, expectsBody: expectsBody, idleTimeout: idle),
            now: start)
    }

    private func feed(
        _ lines: [String], to machine: inout HTTPClientTransferStateMachine, url: String? = nil
    )
        -> [HTTPClientTransferStateMachine.HeaderAction]
    {
        lines.map { machine.headerLine(Array($0.utf8), now: start, url: { url ?? self.url }) }
    }

    @Test func aFinalHeadIsDeliveredAtItsBlankLineAndTheBodyIsCounted() {
        var machine = machine()
        let actions = feed(["HTTP/1.1 200 OK\r\n", "Content-Length: 10\r\n", "\r\n"], to: &machine)
        let head = HTTPClientResponseHead(
            status: .ok, reasonPhrase: "OK", headers: ["Content-Length": "10"], url: url)
        #expect(actions == [.none, .none, .deliverHead(head)])
        #expect(machine.bodyWillArrive(now: start, url: { self.url }) == .accept)
        machine.bodyAccepted(10, now: start)
        #expect(machine.completed(failure: nil, url: { self.url }) == .finishBody(nil))
        #expect(machine.completed(failure: nil, url: { self.url }) == .none)
    }

    @Test func redirectHeadsWaitAndAreCountedAndTheFinalURLIsReported() {
        var machine = machine()
        let actions = feed(
            [
                "HTTP/1.1 301 Moved\r\n", "Location: /a\r\n", "\r\n", "HTTP/1.1 302 Found\r\n", "Location: /b\r\n",
                "\r\n", "HTTP/1.1 200 OK\r\n", "\r\n",
            ], to: &machine, url: "http://origin/b")
        guard case .deliverHead(let head) = actions.last else {
            Issue.record("no head: \(actions)")
            return
        }
        #expect(actions.dropLast().allSatisfy { $0 == .none })
        #expect(head.redirectCount == 2 && head.url == "http://origin/b")
    }

    @Test func anUnfollowedRedirectIsFinalAtItsFirstBodyByteOrAtTheEnd() {
        var withBody = machine()
        _ = feed(["HTTP/1.1 302 Found\r\n", "Location: /x\r\n", "\r\n"], to: &withBody)
        guard case .deliverHeadThenAccept(let head) = withBody.bodyWillArrive(now: start, url: { self.url }) else {
            Issue.record("head not delivered")
            return
        }
        #expect(head.status == .found && head.rangeOutcome == .notRequested)

        var empty = machine()
        _ = feed(["HTTP/1.1 304 Not Modified\r\n", "\r\n"], to: &empty)
        guard case .deliverHeadAndFinish(let notModified, nil) = empty.completed(failure: nil, url: { self.url })
        else {
            Issue.record("head not delivered at the end")
            return
        }
        #expect(notModified.status == .notModified)
    }

    @Test func aCleanEndShortOfTheAnnouncedLengthIsATruncation() {
        var machine = machine(range: .from(first: 100))
        _ = feed(
            ["HTTP/1.1 206 Partial Content\r\n", "Content-Range: bytes 100-199/200\r\n", "\r\n"], to: &machine)
        _ = machine.bodyWillArrive(now: start, url: { self.url })
        machine.bodyAccepted(60, now: start)
        guard case .finishBody(let error?) = machine.completed(failure: nil, url: { self.url }) else {
            Issue.record("no truncation")
            return
        }
        #expect(error.kind == .truncatedBody && error.byteOffset == 160 && error.expectedByteOffset == 200)
    }

    @Test func aFailureMidBodyCarriesTheRepresentationOffset() {
        var machine = machine(range: .closed(first: 1000, last: 1999))
        _ = feed(["HTTP/1.1 206 Partial Content\r\n", "Content-Range: bytes 1000-1999/5000\r\n", "\r\n"], to: &machine)
        _ = machine.bodyWillArrive(now: start, url: { self.url })
        machine.bodyAccepted(250, now: start)
        let reset = HTTPClientError(.connectionReset, detail: "Connection reset by peer")
        guard case .finishBody(let error?) = machine.completed(failure: reset, url: { self.url }) else {
            Issue.record("no error")
            return
        }
        #expect(error.kind == .connectionReset && error.byteOffset == 1250 && error.expectedByteOffset == 2000)
        #expect(error.status == .partialContent && error.url == url)
    }

    @Test func aFailureBeforeTheHeadFailsTheWaitingCaller() {
        var machine = machine()
        let refused = HTTPClientError(.connectFailed, detail: "Connection refused")
        #expect(machine.completed(failure: refused, url: { self.url }) == .failHead(refused))
    }

    @Test func aMalformedLineAbortsAndIsReportedAtTheEnd() {
        var machine = machine()
        let actions = feed(["HTTP/1.1 200 OK\r\n", "garbage\r\n"], to: &machine)
        guard case .abort(let error) = actions.last else {
            Issue.record("no abort")
            return
        }
        #expect(error.kind == .malformedResponse)
        // libcurl then reports a write error; the machine's own reason wins.
        let writeError = HTTPClientError(.transportFailure, detail: "curl error 23")
        #expect(machine.completed(failure: writeError, url: { self.url }) == .failHead(error))
    }

    @Test func aRangeMismatchAbortsBeforeAnyBodyIsAccepted() {
        var machine = machine(range: .closed(first: 0, last: 99))
        let actions = feed(
            ["HTTP/1.1 206 Partial Content\r\n", "Content-Range: bytes 50-149/1000\r\n", "\r\n"], to: &machine)
        guard case .abort(let error) = actions.last else {
            Issue.record("no abort")
            return
        }
        #expect(error.kind == .contentRangeMismatch)
        #expect(machine.bodyWillArrive(now: start, url: { self.url }) == .abort(error))
    }

    @Test func cancellationFailsTheHeadOrEndsTheBody() {
        var waiting = machine()
        #expect(waiting.cancel(.cancelled) == .failHead(HTTPClientError.cancelled))
        var streaming = machine()
        _ = feed(["HTTP/1.1 200 OK\r\n", "\r\n"], to: &streaming)
        guard case .finishBody(let error?) = streaming.cancel(.cancelled) else {
            Issue.record("body not ended")
            return
        }
        #expect(error.kind == .cancelled && error.byteOffset == 0)
        #expect(streaming.cancel(.cancelled) == .none)
    }

    @Test func theIdleDeadlineMovesWithActivityAndStopsWhilePaused() {
        var machine = machine(idle: .seconds(5))
        #expect(machine.idleDeadline == start + .seconds(5))
        _ = machine.headerLine(Array("HTTP/1.1 200 OK\r\n".utf8), now: start + .seconds(2), url: { self.url })
        #expect(machine.idleDeadline == start + .seconds(7))
        #expect(machine.idleTimeoutError(now: start + .seconds(6)) == nil)
        #expect(machine.idleTimeoutError(now: start + .seconds(7))?.kind == .idleTimeout)
        machine.paused(now: start + .seconds(3))
        #expect(machine.idleDeadline == nil)
        #expect(machine.idleTimeoutError(now: start + .seconds(60)) == nil)
        machine.resumed(now: start + .seconds(60))
        #expect(machine.idleDeadline == start + .seconds(65))
    }
}

@Suite struct RangeResponseCheckTests {
    private func check(
        _ requested: RangeRequest.Specifier?, status: Int, _ headers: HTTPHeaders,
        ifRange: HTTPClientRequest.IfRange? = nil
    ) -> Result<HTTPClientResponseHead.RangeOutcome, HTTPClientError> {
        RangeResponseCheck.outcome(
            requested: requested, ifRange: ifRange, status: HTTPStatus(status), headers: headers, url: "http://o/f")
    }

    @Test func partialResponsesMatchingTheRequestAreAccepted() throws {
        let cases: [(RangeRequest.Specifier, String)] = [
            (.closed(first: 0, last: 99), "bytes 0-99/1000"),
            (.closed(first: 900, last: 1999), "bytes 900-999/1000"),  // clipped at the end
            (.closed(first: 0, last: 99), "bytes 0-49/1000"),  // fewer bytes than asked is allowed
            (.from(first: 500), "bytes 500-899/1000"),
            (.from(first: 500), "bytes 500-999/1000"),
            (.from(first: 500), "bytes 500-999/*"),
            (.suffix(length: 100), "bytes 900-999/1000"),
        ]
        for (requested, contentRange) in cases {
            let outcome = try check(requested, status: 206, ["Content-Range": contentRange]).get()
            #expect(outcome == .partial(ContentRange(headerValue: contentRange)!))
        }
    }

    @Test func partialResponsesThatDoNotMatchAreErrors() {
        let cases: [(RangeRequest.Specifier, HTTPHeaders)] = [
            (.closed(first: 0, last: 99), ["Content-Range": "bytes 1-100/1000"]),
            (.closed(first: 0, last: 99), ["Content-Range": "bytes 0-199/1000"]),
            (.from(first: 500), ["Content-Range": "bytes 499-999/1000"]),
            (.suffix(length: 100), ["Content-Range": "bytes 800-999/1000"]),
            (.from(first: 0), [:]),
            (.from(first: 0), ["Content-Range": "bytes */1000"]),
            (.from(first: 0), ["Content-Range": "bytes 0-99/1000", "Content-Length": "50"]),
            (.from(first: 0), ["Content-Type": "multipart/byteranges; boundary=x"]),
        ]
        for (requested, headers) in cases {
            #expect(throws: HTTPClientError(.contentRangeMismatch)) {
                try check(requested, status: 206, headers).get()
            }
        }
    }

    @Test func wholeBodiesTo200TellWhetherTheRepresentationChanged() throws {
        let etag = HTTPClientRequest.IfRange.entityTag(EntityTag(opaqueTag: "v1"))
        #expect(try check(.from(first: 5), status: 200, [:]).get() == .ignored(representationChanged: nil))
        #expect(
            try check(.from(first: 5), status: 200, ["ETag": "\"v2\""], ifRange: etag).get()
                == .ignored(representationChanged: true))
        #expect(
            try check(.from(first: 5), status: 200, ["ETag": "\"v1\""], ifRange: etag).get()
                == .ignored(representationChanged: false))
    }

    @Test func otherStatuses() throws {
        #expect(
            try check(.from(first: 5000), status: 416, ["Content-Range": "bytes */1000"]).get()
                == .notSatisfiable(completeLength: 1000))
        #expect(try check(.from(first: 5), status: 404, [:]).get() == .notApplicable)
        #expect(try check(nil, status: 200, [:]).get() == .notRequested)
        #expect(throws: HTTPClientError(.contentRangeMismatch)) {
            try check(nil, status: 206, ["Content-Range": "bytes 0-9/10"]).get()
        }
    }

    @Test func ifRangeValidatorsComeFromStrongTagsOrOldEnoughDates() {
        #expect(HTTPClientRequest.IfRange(responseHeaders: ["ETag": "\"a\""]) == .entityTag(EntityTag(opaqueTag: "a")))
        #expect(
            HTTPClientRequest.IfRange(
                responseHeaders: ["ETag": "W/\"a\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
                == .lastModified(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")!))
        // A Last-Modified within a second of Date is weak: it cannot guard a resume.
        #expect(
            HTTPClientRequest.IfRange(
                responseHeaders: [
                    "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 08:49:37 GMT",
                ]) == nil)
        #expect(HTTPClientRequest.IfRange(responseHeaders: ["ETag": "W/\"a\""]) == nil)
    }
}
