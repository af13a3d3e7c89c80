import Testing

@testable import StreamKitHTTP
@testable import StreamKitHTTPServer

/// The connection state machine as event → action tables, no sockets.
@Suite struct HTTPServerConnectionStateMachineTests {
    typealias Machine = HTTPServerConnectionStateMachine
    let start = ContinuousClock.now
    let timeouts = Machine.Timeouts(idle: .seconds(60), request: .seconds(10), send: .seconds(30), linger: .seconds(2))

    private func machine() -> Driver {
        Driver(Machine(limits: .init(), timeouts: timeouts, now: start))
    }

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    private func get(_ target: String, _ extra: String = "") -> [UInt8] {
        Array("GET \(target) HTTP/1.1\r\nHost: h\r\n\(extra)\r\n".utf8)
    }

    private func dispatchedTarget(_ action: Machine.Action) -> String? {
        if case .dispatch(let head, _) = action { return head.target }
        return nil
    }

    @Test func aRequestIsDispatchedAndTheConnectionKeptAlive() {
        let machine = machine()
        machine.received(Array(get("/a").prefix(10)), now: at(0))
        #expect(machine.nextAction(now: at(0)) == .wait)
        machine.received(Array(get("/a").dropFirst(10)), now: at(0.1))
        #expect(dispatchedTarget(machine.nextAction(now: at(0.1))) == "/a")
        #expect(machine.isResponding)
        #expect(machine.nextAction(now: at(0.1)) == .wait)
        #expect(machine.responseHeadWillBeSent())
        #expect(machine.responseFinished(now: at(0.2)) == .wait)
        #expect(!machine.isResponding && !machine.isClosed)
    }

    @Test func pipelinedRequestsAreAnsweredOneAtATimeInOrder() {
        let machine = machine()
        machine.received(get("/1") + get("/2") + get("/3"), now: at(0))
        #expect(dispatchedTarget(machine.nextAction(now: at(0))) == "/1")
        #expect(machine.nextAction(now: at(0)) == .wait, "the second waits for the first response")
        _ = machine.responseHeadWillBeSent()
        #expect(dispatchedTarget(machine.responseFinished(now: at(0.1))) == "/2")
        _ = machine.responseHeadWillBeSent()
        #expect(dispatchedTarget(machine.responseFinished(now: at(0.2))) == "/3")
        _ = machine.responseHeadWillBeSent()
        #expect(machine.responseFinished(now: at(0.3)) == .wait)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
    ])
    func keepAliveFollowsTheRequest(text: String, keepAlive: Bool) {
        let machine = machine()
        machine.received(Array(text.utf8), now: at(0))
        #expect(dispatchedTarget(machine.nextAction(now: at(0))) == "/")
        #expect(machine.responseHeadWillBeSent() == keepAlive)
        #expect(machine.responseFinished(now: at(0.1)) == (keepAlive ? .wait : .close))
        #expect(machine.isClosed == !keepAlive)
    }

    @Test func aStreamWithoutFramingForbidsKeepAlive() {
        let machine = machine()
        machine.received(get("/"), now: at(0))
        _ = machine.nextAction(now: at(0))
        machine.forbidKeepAlive()
        #expect(!machine.responseHeadWillBeSent())
        #expect(machine.responseFinished(now: at(1)) == .close)
    }

    @Test func expectContinueIsAnsweredBeforeTheBody() {
        let machine = machine()
        machine.received(
            Array("POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n".utf8), now: at(0))
        #expect(machine.nextAction(now: at(0)) == .sendContinue)
        #expect(machine.nextAction(now: at(0)) == .wait)
        machine.received(Array("body".utf8), now: at(0.1))
        guard case .dispatch(let head, let body) = machine.nextAction(now: at(0.1)) else {
            Issue.record("no dispatch")
            return
        }
        #expect(head.method == .post && body == Array("body".utf8))
    }

    @Test func aMalformedRequestIsRejectedThenTheConnectionLingersAndCloses() {
        let machine = machine()
        machine.received(Array("GARBAGE\r\n\r\n".utf8), now: at(0))
        #expect(machine.nextAction(now: at(0)) == .reject(.badRequest))
        #expect(!machine.responseHeadWillBeSent())
        #expect(machine.responseFinished(now: at(0.1)) == .lingerThenClose)
        #expect(machine.wantsInput, "input is drained while lingering")
        machine.received(Array("more junk".utf8), now: at(0.2))
        #expect(machine.nextAction(now: at(0.2)) == .wait)
        machine.inputEnded()
        #expect(machine.nextAction(now: at(0.3)) == .close)
    }

    @Test func lingeringEndsAtItsDeadline() {
        let machine = machine()
        machine.received(Array("GET / HTTP/3.0\r\nHost: h\r\n\r\n".utf8), now: at(0))
        #expect(machine.nextAction(now: at(0)) == .reject(HTTPStatus(505)))
        #expect(machine.responseFinished(now: at(1)) == .lingerThenClose)
        #expect(machine.tick(now: at(2.9)) == .wait)
        #expect(machine.tick(now: at(3.0)) == .close)
    }

    @Test func aNewConnectionThatSendsNothingGetsTheRequestTimeout() {
        let machine = machine()
        #expect(machine.tick(now: at(9.9)) == .wait)
        #expect(machine.tick(now: at(10)) == .close)
        #expect(machine.isClosed)
    }

    @Test func aKeptAliveConnectionIsIdleFromTheEndOfItsLastResponse() {
        let machine = machine()
        machine.received(get("/"), now: at(50))
        _ = machine.nextAction(now: at(50))
        _ = machine.responseHeadWillBeSent()
        _ = machine.responseFinished(now: at(55))
        #expect(machine.tick(now: at(114)) == .wait)
        #expect(machine.tick(now: at(115)) == .close)
    }

    @Test func aSlowRequestIsCutOffWith408() {
        let machine = machine()
        // A byte a second, for longer than the request timeout.
        let request = get("/")
        for second in 0..<10 {
            machine.received([request[second]], now: at(Double(second)))
            #expect(machine.nextAction(now: at(Double(second))) == .wait)
            #expect(machine.tick(now: at(Double(second) + 0.5)) == .wait)
        }
        #expect(machine.tick(now: at(10)) == .reject(.requestTimeout))
        #expect(!machine.responseHeadWillBeSent())
        #expect(machine.responseFinished(now: at(10.1)) == .lingerThenClose)
    }

    @Test func aStalledResponseIsAbandonedAfterTheSendTimeout() {
        let machine = machine()
        machine.received(get("/"), now: at(0))
        _ = machine.nextAction(now: at(0))
        #expect(machine.tick(now: at(100)) == .wait, "a handler may take its time")
        machine.writeBlocked(now: at(100))
        #expect(machine.tick(now: at(129)) == .wait)
        machine.writeProgressed()
        machine.writeBlocked(now: at(129))
        #expect(machine.tick(now: at(158)) == .wait)
        #expect(machine.tick(now: at(159)) == .close)
    }

    @Test func shutdownClosesIdleAndPartialConnectionsAndFinishesResponses() {
        let idle = machine()
        #expect(idle.shutdown() == .close)

        let partial = machine()
        partial.received(Array("GET / HT".utf8), now: at(0))
        _ = partial.nextAction(now: at(0))
        #expect(partial.shutdown() == .close)

        let responding = machine()
        responding.received(get("/") + get("/next"), now: at(0))
        _ = responding.nextAction(now: at(0))
        #expect(responding.shutdown() == .wait)
        #expect(!responding.responseHeadWillBeSent(), "the response says Connection: close")
        #expect(responding.responseFinished(now: at(1)) == .lingerThenClose, "the pipelined request is not answered")
    }

    @Test func theClientStoppingSendingClosesAtTheRightMoment() {
        let idle = machine()
        idle.inputEnded()
        #expect(idle.nextAction(now: at(0)) == .close)

        let partial = machine()
        partial.received(Array("GET / HTTP/1.1\r\n".utf8), now: at(0))
        partial.inputEnded()
        #expect(partial.nextAction(now: at(0)) == .close)

        // A client may half-close after its request and still read the response.
        let halfClosed = machine()
        halfClosed.received(get("/"), now: at(0))
        halfClosed.inputEnded()
        #expect(dispatchedTarget(halfClosed.nextAction(now: at(0))) == "/")
        #expect(!halfClosed.responseHeadWillBeSent())
        #expect(halfClosed.responseFinished(now: at(1)) == .close)
    }

    @Test func readingPausesWhenTooMuchIsPipelinedDuringAResponse() {
        let machine = machine()
        machine.received(get("/"), now: at(0))
        _ = machine.nextAction(now: at(0))
        let request = get("/again")
        var buffered = 0
        while buffered < Machine.maximumBufferedPipelineBytes {
            #expect(machine.wantsInput)
            machine.received(request, now: at(0))
            buffered += request.count
        }
        #expect(!machine.wantsInput)
        _ = machine.responseHeadWillBeSent()
        #expect(dispatchedTarget(machine.responseFinished(now: at(1))) == "/again")
    }
}

/// Holds a machine so that `#expect` can call its mutating methods.
private final class Driver {
    typealias Machine = HTTPServerConnectionStateMachine
    private var machine: Machine

    init(_ machine: Machine) { self.machine = machine }

    var wantsInput: Bool { machine.wantsInput }
    var isClosed: Bool { machine.isClosed }
    var isResponding: Bool { machine.isResponding }
    func received(_ bytes: [UInt8], now: ContinuousClock.Instant) { machine.received(bytes, now: now) }
    func inputEnded() { machine.inputEnded() }
    func nextAction(now: ContinuousClock.Instant) -> Machine.Action { machine.nextAction(now: now) }
    func responseHeadWillBeSent() -> Bool { machine.responseHeadWillBeSent() }
    func responseFinished(now: ContinuousClock.Instant) -> Machine.Action { machine.responseFinished(now: now) }
    func forbidKeepAlive() { machine.forbidKeepAlive() }
    func writeBlocked(now: ContinuousClock.Instant) { machine.writeBlocked(now: now) }
    func writeProgressed() { machine.writeProgressed() }
    func tick(now: ContinuousClock.Instant) -> Machine.Action { machine.tick(now: now) }
    func shutdown() -> Machine.Action { machine.shutdown() }
}
