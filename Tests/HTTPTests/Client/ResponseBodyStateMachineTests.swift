import Testing

@testable import HTTP

@Suite struct ResponseBodyStateMachineTests {
    private func receive(
        _ count: Int, _ machine: inout ResponseBodyStateMachine
    ) -> ResponseBodyStateMachine.ReceiveAction {
        let bytes = [UInt8](repeating: 7, count: count)
        return bytes.withUnsafeBytes { machine.receive($0) }
    }

    @Test func theProducerPausesAtTheHighWaterMarkAndTheConsumerResumesIt() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(60, &machine) == .accepted)
        #expect(receive(60, &machine) == .accepted)  // 60 < 100: accepted, buffer may exceed by one chunk
        #expect(receive(10, &machine) == .pause)
        #expect(machine.isProducerPaused && machine.bufferedCount == 120)
        #expect(receive(10, &machine) == .pause)  // still paused until the consumer takes
        #expect(machine.next() == .chunk([UInt8](repeating: 7, count: 120), resumeProducer: true))
        #expect(!machine.isProducerPaused && machine.bufferedCount == 0)
        #expect(receive(10, &machine) == .accepted)
        #expect(machine.next() == .chunk([UInt8](repeating: 7, count: 10), resumeProducer: false))
    }

    @Test func aWaitingConsumerIsWokenAtFlushNotOnEveryChunk() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(machine.next() == .wait)
        #expect(receive(5, &machine) == .accepted)
        #expect(receive(5, &machine) == .accepted)
        #expect(machine.flush() == .resume(.success([UInt8](repeating: 7, count: 10))))
        #expect(machine.flush() == .none)
    }

    @Test func theEndComesAfterEveryBufferedByte() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(5, &machine) == .accepted)
        let error = HTTPClientError.truncatedBody(url: nil, reached: 5, expected: 10)
        #expect(machine.finish(error) == .none)  // nobody waiting
        #expect(machine.next() == .chunk([UInt8](repeating: 7, count: 5), resumeProducer: false))
        #expect(machine.next() == .fail(error))
        #expect(receive(1, &machine) == .abort)
    }

    @Test func finishingWakesAWaitingConsumer() {
        var clean = ResponseBodyStateMachine(highWater: 100)
        #expect(clean.next() == .wait)
        #expect(clean.finish(nil) == .resume(.success(nil)))
        #expect(clean.next() == .end)

        var failed = ResponseBodyStateMachine(highWater: 100)
        #expect(failed.next() == .wait)
        #expect(failed.finish(.cancelled) == .resume(.failure(.cancelled)))
    }

    @Test func aGoneConsumerCancelsTheTransferOnce() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(machine.next() == .wait)
        let (cancel, wake) = machine.consumerCancelled()
        #expect(cancel && wake == .resume(.failure(.cancelled)))
        #expect(receive(1, &machine) == .abort)
        #expect(machine.consumerCancelled().cancelTransfer == false)
        #expect(machine.finish(nil) == .none)

        var finished = ResponseBodyStateMachine(highWater: 100)
        _ = finished.finish(nil)
        #expect(finished.consumerCancelled().cancelTransfer == false)
    }
}
