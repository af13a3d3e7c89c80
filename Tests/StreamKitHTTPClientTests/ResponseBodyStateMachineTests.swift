import Testing

@testable import StreamKitHTTPClient

@Suite struct ResponseBodyStateMachineTests {
    private let start = ContinuousClock.now

    private func receive(
        _ count: Int, _ machine: inout ResponseBodyStateMachine
    ) -> ResponseBodyStateMachine.ReceiveAction {
        let bytes = [UInt8](repeating: 7, count: count)
        return bytes.withUnsafeBytes { machine.receive($0) }
    }

    private func bytes(_ count: Int) -> ResponseBodyStateMachine.Delivery {
        .chunk([UInt8](repeating: 7, count: count))
    }

    @Test func theProducerPausesAtTheHighWaterMarkAndTheConsumerResumesIt() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(60, &machine) == .accepted)
        #expect(receive(60, &machine) == .accepted)  // 60 < 100: accepted, buffer may exceed by one chunk
        #expect(receive(10, &machine) == .pause)
        #expect(machine.isProducerPaused && machine.bufferedCount == 120)
        #expect(receive(10, &machine) == .pause)  // still paused until the consumer takes
        #expect(machine.next() == .deliver(bytes(120), resumeProducer: true))
        #expect(!machine.isProducerPaused && machine.bufferedCount == 0)
        #expect(receive(10, &machine) == .accepted)
        #expect(machine.next() == .deliver(bytes(10), resumeProducer: false))
    }

    @Test func aConsumerHoldingTheWholeBodyRaisesTheMarkButNeverLowersIt() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        machine.raiseHighWater(to: 300)
        #expect(receive(150, &machine) == .accepted)
        #expect(receive(150, &machine) == .accepted)
        #expect(receive(10, &machine) == .pause)
        machine.raiseHighWater(to: 50)
        #expect(machine.highWater == 300)
        #expect(machine.next() == .deliver(bytes(300), resumeProducer: true))
        machine.raiseHighWater(to: .max)  // no limit: no overflow either
        #expect(receive(1 << 20, &machine) == .accepted)
        #expect(receive(1 << 20, &machine) == .accepted)
        #expect(machine.next() == .deliver(bytes(2 << 20), resumeProducer: false))
    }

    @Test func aWaitingConsumerIsWokenAtFlushNotOnEveryChunk() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(machine.next() == .wait)
        #expect(receive(5, &machine) == .accepted)
        #expect(receive(5, &machine) == .accepted)
        #expect(machine.flush(now: start) == .resume(.success(bytes(10))))
        #expect(machine.flush(now: start) == .none)
    }

    @Test func theEndComesAfterEveryBufferedByte() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(5, &machine) == .accepted)
        let error = HTTPClientError.truncatedBody(url: nil, reached: 5, expected: 10)
        #expect(machine.finish(error) == .none)  // nobody waiting
        #expect(machine.next() == .deliver(bytes(5), resumeProducer: false))
        #expect(machine.next() == .fail(error))
        #expect(receive(1, &machine) == .abort)
    }

    @Test func finishingWakesAWaitingConsumer() {
        var clean = ResponseBodyStateMachine(highWater: 100)
        #expect(clean.next() == .wait)
        #expect(clean.finish(nil) == .resume(.success(.end)))
        #expect(clean.next() == .deliver(.end, resumeProducer: false))

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

    @Test func unconditionalDeliveriesAreKeptAndAskForAPause() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        let big = [UInt8](repeating: 1, count: 150)
        #expect(big.withUnsafeBytes { machine.receiveUnconditionally($0) } == .pause)
        #expect(machine.bufferedCount == 150 && machine.isProducerPaused)
        #expect(machine.next() == .deliver(.chunk(big), resumeProducer: true))
    }

    @Test func directWritesTakeOverAfterTheBufferedBytes() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(60, &machine) == .accepted)
        #expect(receive(60, &machine) == .accepted)
        #expect(receive(10, &machine) == .pause)
        // The buffered bytes go back to the consumer first; the producer stays paused meanwhile.
        #expect(machine.startDirectWrite(descriptor: 9, offset: 1000) == .writeFirst([UInt8](repeating: 7, count: 120)))
        #expect(machine.isProducerPaused && !machine.isWritingDirectly)
        #expect(machine.startDirectWrite(descriptor: 9, offset: 1120) == .started(resumeProducer: true))
        // From now on the producer writes at consecutive offsets and reports counts.
        #expect(receive(10, &machine) == .writeDirectly(descriptor: 9, offset: 1120))
        machine.wroteDirectly(10)
        #expect(receive(20, &machine) == .writeDirectly(descriptor: 9, offset: 1130))
        // Bytes the producer was told to write but has not written yet are not reported: the
        // consumer would read the file before they are in it.
        #expect(machine.bufferedCount == 0)
        #expect(machine.next() == .deliver(.written(10), resumeProducer: false))
        machine.wroteDirectly(20)
        #expect(machine.next() == .deliver(.written(30), resumeProducer: false))
        #expect(machine.next() == .wait)
        #expect(receive(5, &machine) == .writeDirectly(descriptor: 9, offset: 1150))
        #expect(machine.flush(now: start) == .none)
        machine.wroteDirectly(5)
        #expect(machine.flush(now: start) == .resume(.success(.written(35))))
        // Progress wakes the reader at most every 100 ms; the end always does.
        #expect(machine.next() == .wait)
        #expect(receive(1, &machine) == .writeDirectly(descriptor: 9, offset: 1155))
        machine.wroteDirectly(1)
        #expect(machine.flush(now: start + .milliseconds(50)) == .none)
        #expect(machine.flush(now: start + .milliseconds(100)) == .resume(.success(.written(36))))
        #expect(receive(4, &machine) == .writeDirectly(descriptor: 9, offset: 1156))
        machine.wroteDirectly(4)
        // Written bytes are reported before the end or the error.
        #expect(receive(5, &machine) == .writeDirectly(descriptor: 9, offset: 1160))
        machine.wroteDirectly(5)
        let reset = HTTPClientError(.connectionReset)
        #expect(machine.finish(reset) == .none)
        #expect(machine.next() == .deliver(.written(45), resumeProducer: false))
        #expect(machine.next() == .fail(reset))
        #expect(machine.releaseDirectWriteDescriptor() == 9)
        #expect(machine.releaseDirectWriteDescriptor() == nil)
    }

    /// A direct-write consumer that goes hears of it only once the producer ended: until then the
    /// producer may still write the bytes it gathered into the consumer's file.
    @Test func aCancelledDirectWriteEndsOnlyWhenTheProducerDoes() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(machine.startDirectWrite(descriptor: 9, offset: 0) == .started(resumeProducer: false))
        #expect(receive(10, &machine) == .writeDirectly(descriptor: 9, offset: 0))
        #expect(machine.next() == .wait)
        let (cancel, wake) = machine.consumerCancelled()
        #expect(cancel && wake == .none, "the consumer still waits")
        #expect(machine.consumerCancelled() == (cancelTransfer: false, wake: .none), "the transfer is stopped once")
        #expect(receive(5, &machine) == .abort, "no new bytes are taken")
        machine.wroteDirectly(10)  // the gathered bytes land
        // libcurl ends a transfer whose bytes were refused with a write error: still a cancellation.
        #expect(machine.finish(HTTPClientError(.transportFailure)) == .resume(.success(.written(10))))
        #expect(machine.next() == .fail(.cancelled))
        #expect(machine.releaseDirectWriteDescriptor() == 9)
    }

    @Test func directWritesAfterTheEndHaveNothingToDo() {
        var ended = ResponseBodyStateMachine(highWater: 100)
        _ = ended.finish(nil)
        #expect(ended.startDirectWrite(descriptor: 3, offset: 0) == .ended)
        #expect(ended.releaseDirectWriteDescriptor() == nil)
        var failed = ResponseBodyStateMachine(highWater: 100)
        _ = failed.finish(.cancelled)
        #expect(failed.startDirectWrite(descriptor: 3, offset: 0) == .fail(.cancelled))
    }

    // MARK: A producer held until asked, that moves bytes into the file itself (splice)

    @Test func aHeldProducerIsResumedByTheFirstRead() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(10, &machine) == .accepted)  // bytes that came with the head
        machine.holdUntilAsked()
        #expect(machine.isProducerPaused)
        #expect(receive(10, &machine) == .pause)  // nothing more until the consumer asks
        #expect(machine.next() == .deliver(bytes(10), resumeProducer: true))
        #expect(!machine.isProducerPaused)

        var empty = ResponseBodyStateMachine(highWater: 100)
        empty.holdUntilAsked()
        #expect(empty.next() == .deliver(.chunk([]), resumeProducer: true))
        #expect(empty.next() == .wait)
    }

    @Test func aHeldProducerHandedAFileMovesBytesIntoItAtTheOffset() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        #expect(receive(10, &machine) == .accepted)
        machine.holdUntilAsked()
        #expect(machine.directWriteTarget == nil)
        #expect(machine.startDirectWrite(descriptor: 9, offset: 500) == .writeFirst([UInt8](repeating: 7, count: 10)))
        #expect(machine.startDirectWrite(descriptor: 9, offset: 510) == .started(resumeProducer: true))
        #expect(machine.directWriteTarget?.descriptor == 9 && machine.directWriteTarget?.offset == 510)
        machine.movedDirectly(1000)
        #expect(machine.directWriteTarget?.offset == 1510)
        #expect(machine.next() == .deliver(.written(1000), resumeProducer: false))
        machine.movedDirectly(24)
        #expect(machine.finish(nil) == .none)
        #expect(machine.next() == .deliver(.written(1024), resumeProducer: false))
        #expect(machine.next() == .deliver(.end, resumeProducer: false))
        #expect(machine.directWriteTarget == nil)
    }

    @Test func aGoneConsumerTakesTheFileAwayFromTheProducer() {
        var machine = ResponseBodyStateMachine(highWater: 100)
        machine.holdUntilAsked()
        #expect(machine.startDirectWrite(descriptor: 9, offset: 0) == .started(resumeProducer: true))
        #expect(machine.directWriteTarget != nil)
        let (cancel, _) = machine.consumerCancelled()
        #expect(cancel)
        #expect(machine.directWriteTarget == nil)
        #expect(receive(10, &machine) == .abort)
    }
}
