import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// Servers that break the protocol, staged with the scripted responder: each must end the
/// session with a clear error, promptly, holding bounded memory.
@Suite struct HostileServerTests {
    /// Completes a plain handshake (S0, S1, S2 of our own), reads C2, then plays `after`.
    static func script(_ after: [ScriptedTCPResponder.Step]) -> [ScriptedTCPResponder.Step] {
        [
            .read(byteCount: 1_537),
            .send([3] + [UInt8](repeating: 0x11, count: 1_536) + [UInt8](repeating: 0x22, count: 1_536)),
            .read(byteCount: 1_536),
        ] + after
    }

    static func chunk(_ message: RTMPMessage, chunkStream: UInt32 = 3) -> [UInt8] {
        var encoder = ChunkEncoder()
        var buffer = ByteBuffer()
        encoder.encode(message, chunkStreamID: chunkStream, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    static let connectResult = chunk(
        RTMPCommand(name: "_result", transactionID: 1, arguments: [.object(["code": "NetConnection.Connect.Success"])])
            .message())

    private func failure(
        of steps: [ScriptedTCPResponder.Step], configuration: RTMPConnection.Configuration = .init()
    ) async throws -> (RTMPError, Duration) {
        let responder = try ScriptedTCPResponder(steps: steps)
        let connection = RTMPConnection(
            url: try RTMPURL("rtmp://127.0.0.1:\(responder.port)/live/hostile"), role: .play,
            configuration: configuration)
        let started = ContinuousClock.now
        defer { Task { await responder.stop() } }
        do {
            try await connection.open()
            _ = try await connection.nextMessage(idleTimeout: .seconds(5))
        } catch {
            return (error, ContinuousClock.now - started)
        }
        throw TestSupportError("the session did not fail")
    }

    /// nginx-rtmp closes the connection for an unknown application; only a close during
    /// `connect` says so, a reset does not.
    @Test func onlyACloseDuringConnectHintsAtAnUnknownApplication() async throws {
        let (closed, _) = try await failure(of: Self.script([.drain(.milliseconds(200)), .close]))
        #expect(closed.kind == .connectionClosed && closed.description.contains("unknown application"), "\(closed)")
        let (reset, _) = try await failure(of: Self.script([.sleep(.milliseconds(50)), .reset]))
        #expect(
            reset.kind == .connectionLost && reset.description.contains("application 'live'")
                && !reset.description.contains("nginx"), "\(reset)")
    }

    @Test(arguments: [
        (hexBytes("02 000000 000004 01 00000000 00000000"), "chunk size to 0"),
        (hexBytes("02 000000 000004 01 00000000 80000000"), "chunk size to 2147483648"),
        (hexBytes("03 000000 FFFFFF 09 00000000"), "of 16777215 bytes on chunk stream 3 exceeds"),
        (hexBytes("03 000000 000004 2A 00000000 01020304"), "unknown message type 42"),
    ])
    func protocolViolationsEndTheSession(_ hostile: [UInt8], _ expected: String) async throws {
        let (error, elapsed) = try await failure(of: Self.script([.send(hostile), .stall]))
        // The kind shows the bytes ended the session, not a timer (responses may take 10 s, media 5 s).
        #expect(error.kind == .protocolViolation && error.description.contains(expected), "\(error)")
        #expect(elapsed < .seconds(20), "the error came only after \(elapsed)")
    }

    /// An aggregate message whose sub-message announces 2^24 - 1 bytes it does not hold.
    @Test func aggregateSubMessagesBeyondTheirMessage() async throws {
        let body = hexBytes("09 FFFFFF 000000 00 000000 0102030405 00000010")
        let aggregate = Self.chunk(RTMPMessage(type: .aggregate, streamID: 1, payload: body), chunkStream: 6)
        let (error, _) = try await failure(of: Self.script([.send(aggregate), .stall]))
        #expect(error.kind == .protocolViolation && error.description.contains("runs past the end"), "\(error)")
    }

    /// Partial messages on many chunk streams, each within the message limit, together beyond
    /// what the decoder may hold.
    @Test func partialMessagesBeyondTheBufferLimit() async throws {
        var hostile: [UInt8] = []
        for chunkStream in 3...12 {
            // 200 KB announced, one 64 KB chunk sent (the server set its chunk size to 64 KB first).
            hostile +=
                hexBytes(String(format: "%02X", chunkStream) + " 000000 030D40 09 01000000")
                + [UInt8](repeating: 0, count: 65_536)
        }
        var configuration = RTMPConnection.Configuration()
        configuration.client.limits = ChunkDecoder.Limits(maximumBufferedBytes: 512 << 10)
        let (error, _) = try await failure(
            of: Self.script([.send(hexBytes("02 000000 000004 01 00000000 00010000") + hostile), .stall]),
            configuration: configuration)
        #expect(error.kind == .protocolViolation && error.description.contains("more than 524288 bytes"), "\(error)")
    }

    @Test func badAMFInACommand() async throws {
        let garbage = Self.chunk(
            RTMPMessage(type: .amf0Command, payload: [0x02, 0x00, 0x07, 0x5F, 0x72, 0xFF, 0x13, 0x37]))
        let (error, _) = try await failure(of: Self.script([.send(garbage), .stall]))
        #expect(error.kind == .malformedMessage && error.description.contains("command message"), "\(error)")
    }

    @Test func badAMFInAnOnStatus() async throws {
        let (error, _) = try await failure(
            of: Self.script([
                .send(Self.connectResult),
                .send(
                    Self.chunk(
                        RTMPMessage(
                            type: .amf0Command,
                            payload: AMF0Encoder.encode(["onStatus", 0, .null]) + [0x03, 0x00, 0x01]))),
                .stall,
            ]))
        #expect(error.kind == .malformedMessage, "\(error)")
    }

    @Test func handshakeThatNeverFinishes() async throws {
        var configuration = RTMPConnection.Configuration()
        configuration.handshakeTimeout = .milliseconds(500)
        let (error, elapsed) = try await failure(
            of: [.read(byteCount: 1_537), .send([3] + [UInt8](repeating: 0x11, count: 700)), .stall],
            configuration: configuration)
        #expect(
            error.kind == .handshakeTimedOut && error.description.contains("received 701 of 3073 bytes"), "\(error)")
        #expect(elapsed >= .milliseconds(400) && elapsed < .seconds(20), "\(elapsed)")
    }

    @Test func wrongVersionInS0() async throws {
        let (error, _) = try await failure(of: [.read(byteCount: 1_537), .send([6]), .stall])
        #expect(error.kind == .handshakeFailed && error.description.contains("RTMPE"), "\(error)")
    }

    @Test func closedDuringConnect() async throws {
        let (error, _) = try await failure(of: Self.script([.close]))
        // Closing with our connect command unread makes the kernel send a reset, so either kind is right.
        #expect([.connectionClosed, .connectionLost].contains(error.kind), "\(error)")
        #expect(error.description.contains("while connecting to application 'live'"), "\(error)")
    }

    @Test func silentServerTimesOutTheResponse() async throws {
        var configuration = RTMPConnection.Configuration()
        configuration.responseTimeout = .milliseconds(300)
        let (error, _) = try await failure(of: Self.script([.stall]), configuration: configuration)
        #expect(error.kind == .responseTimeout && error.description.contains("'connect'"), "\(error)")
        let (afterConnect, _) = try await failure(
            of: Self.script([.send(Self.connectResult), .stall]), configuration: configuration)
        #expect(
            afterConnect.kind == .responseTimeout && afterConnect.description.contains("'createStream'"),
            "\(afterConnect)")
    }

    /// A stream that starts and ends without audio or video is a failure, not an empty success.
    @Test func streamEndingBeforeAnyMediaIsAFailure() async throws {
        let startPlay =
            Self.connectResult + Self.chunk(RTMPCommand(name: "_result", transactionID: 2, arguments: [1]).message())
            + Self.chunk(
                RTMPCommand(
                    name: "onStatus", transactionID: 0,
                    arguments: [.object(["level": "status", "code": "NetStream.Play.Start"])]
                )
                .message(streamID: 1))
            + Self.chunk(RTMPControlMessage.userControl(.streamEOF(streamID: 1)).message, chunkStream: 2)
        let responder = try ScriptedTCPResponder(steps: Self.script([.send(startPlay), .stall]))
        let output = try TestRun.makeTemporaryDirectory("rtmp-empty").appendingPathComponent("empty.flv")
        let recorder = RTMPRecorder(url: try RTMPURL("rtmp://127.0.0.1:\(responder.port)/live/empty"))
        do {
            _ = try await recorder.record(to: output.path)
            Issue.record("an empty stream was recorded")
        } catch let error as RTMPError {
            #expect(error.kind == .noMedia && error.description.contains("Stream EOF"), "\(error)")
        }
        #expect(responder.connectionCount == 1, "a stream the server ended is not reconnected")
        await responder.stop()
    }
}
