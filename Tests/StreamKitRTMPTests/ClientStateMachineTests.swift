import StreamKitAMF
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import Testing

/// The server side of a conversation with the client state machine, built from the chunk codec.
struct ScriptedServer {
    var encoder = ChunkEncoder()
    var decoder = ChunkDecoder()

    /// S0, S1 and S2 for a plain handshake.
    static func handshakeBytes() -> [UInt8] {
        [3] + [UInt8](repeating: 1, count: 1_536) + [UInt8](repeating: 2, count: 1_536)
    }

    mutating func bytes(_ message: RTMPMessage, chunkStream: UInt32 = 3) -> [UInt8] {
        var buffer = ByteBuffer()
        encoder.encode(message, chunkStreamID: chunkStream, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    mutating func command(_ name: String, _ transaction: Double, _ values: [AMF0Value], stream: UInt32 = 0) -> [UInt8] {
        bytes(
            RTMPCommand(name: name, transactionID: transaction, commandObject: .null, arguments: values).message(
                streamID: stream))
    }

    mutating func status(
        _ code: String, level: String = "status", description: String = "", stream: UInt32 = 1
    ) -> [UInt8] {
        command(
            "onStatus", 0,
            [.object(["level": .string(level), "code": .string(code), "description": .string(description)])],
            stream: stream)
    }

    mutating func control(_ control: RTMPControlMessage) -> [UInt8] { bytes(control.message, chunkStream: 2) }

    /// What the client sent, as messages (after its C0, C1 and C2).
    mutating func read(_ actions: [RTMPClientStateMachine.Action]) throws -> [RTMPMessage] {
        var messages: [RTMPMessage] = []
        for case .send(var buffer) in actions {
            while let message = try decoder.decode(&buffer) { messages.append(message) }
        }
        return messages
    }
}

/// Event → action tables for the client state machine, with no socket.
@Suite struct ClientStateMachineTests {
    private func machine(
        _ role: RTMPClientStateMachine.Role, url: String = "rtmp://h/live/show"
    ) throws
        -> RTMPClientStateMachine
    {
        var random = SplitMix64(seed: 5)
        return RTMPClientStateMachine(url: try RTMPURL(url), role: role, uptime: 0, random: &random)
    }

    private func commands(_ messages: [RTMPMessage]) throws -> [String] {
        try messages.filter { $0.type == .amf0Command }.map { try RTMPCommand(message: $0).name }
    }

    /// Runs the client through the handshake, connect and createStream; returns it streaming.
    private func started(
        _ role: RTMPClientStateMachine.Role, server: inout ScriptedServer
    ) throws -> RTMPClientStateMachine {
        var client = try machine(role)
        guard case .send(let c0c1) = client.start().first else { throw RTMPError.invalidState("no C0C1") }
        #expect(c0c1.readableBytes == 1_537 && client.phase == .handshaking)

        // S0 S1 S2 → C2, Set Chunk Size, connect.
        var actions = client.receive(ScriptedServer.handshakeBytes())
        guard case .send(var sent) = actions.first else { throw RTMPError.invalidState("no C2") }
        #expect(sent.readBytes(length: 1_536) == [UInt8](repeating: 1, count: 1_536), "C2 echoes S1")
        actions[0] = .send(sent)
        var messages = try server.read(actions)
        #expect(messages.first == RTMPControlMessage.setChunkSize(65_536).message)
        #expect(try commands(messages) == ["connect"])
        #expect(actions.contains { if case .handshakeCompleted = $0 { true } else { false } })
        #expect(client.phase == .connecting)

        // Window, bandwidth, chunk size and connect's _result, in nginx-rtmp's order.
        var reply = server.control(.windowAcknowledgementSize(5_000_000))
        reply += server.control(.setPeerBandwidth(5_000_000, limitType: 2))
        reply += server.control(.setChunkSize(4_096))
        server.encoder.setChunkSize(4_096)
        reply += server.command(
            "_result", 1,
            [
                .object([
                    "level": "status", "code": "NetConnection.Connect.Success", "description": "Connection succeeded.",
                ])
            ])
        actions = client.receive(reply)
        messages = try readAfterChunkSize(actions, server: &server)
        #expect(
            messages.contains(RTMPControlMessage.windowAcknowledgementSize(5_000_000).message),
            "answers Set Peer Bandwidth")
        // A publisher sends releaseStream and FCPublish without waiting for their answers.
        #expect(
            try commands(messages)
                == (role == .publish ? ["releaseStream", "FCPublish", "createStream"] : ["createStream"]))
        #expect(
            actions.contains {
                if case .connected(let status) = $0 { status?.code == "NetConnection.Connect.Success" } else { false }
            })
        #expect(client.phase == .creatingStream && client.acknowledgementWindow == 5_000_000)

        // createStream's _result → play (with a buffer length) or publish on stream 1.
        let createID: Double = role == .publish ? 4 : 2
        actions = client.receive(server.command("_result", createID, [.number(1)]))
        messages = try readAfterChunkSize(actions, server: &server)
        if role == .play {
            #expect(
                messages.first
                    == RTMPControlMessage.userControl(.setBufferLength(streamID: 1, milliseconds: 3_000)).message)
            let play = try RTMPCommand(message: messages[1])
            #expect(play.name == "play" && play.arguments == ["show", -2] && messages[1].streamID == 1)
        } else {
            let publish = try RTMPCommand(message: messages[0])
            #expect(publish.name == "publish" && publish.arguments == ["show", "live"] && messages[0].streamID == 1)
        }
        #expect(client.phase == .startingStream && client.streamID == 1)

        actions = client.receive(server.status(role == .play ? "NetStream.Play.Start" : "NetStream.Publish.Start"))
        #expect(actions.count == 1)
        guard case .streamStarted(streamID: 1, let status) = actions.first else {
            throw RTMPError.invalidState("not started")
        }
        #expect(status.code.hasSuffix(".Start") && client.phase == .streaming)
        return client
    }

    /// The client's messages in `actions`, read by the server's decoder (which has seen the client's chunk size).
    private func readAfterChunkSize(
        _ actions: [RTMPClientStateMachine.Action], server: inout ScriptedServer
    ) throws -> [RTMPMessage] {
        try server.read(actions)
    }

    @Test func playsAStream() throws {
        var server = ScriptedServer()
        var client = try started(.play, server: &server)

        // Media arrives as actions; an aggregate is unpacked.
        let video = RTMPMessage(type: .video, streamID: 1, timestamp: RTMPTimestamp(40), payload: [0x17, 0x01])
        var actions = client.receive(server.bytes(video, chunkStream: 6))
        #expect(actions == [.media(video)])
        let aggregate = AggregateMessage.pack([
            RTMPMessage(type: .audio, streamID: 1, timestamp: RTMPTimestamp(0), payload: [0xAF, 1]),
            RTMPMessage(type: .audio, streamID: 1, timestamp: RTMPTimestamp(23), payload: [0xAF, 2]),
        ])
        var shifted = aggregate
        shifted.timestamp = RTMPTimestamp(100)
        actions = client.receive(server.bytes(shifted, chunkStream: 7))
        #expect(
            actions.map { action -> UInt32 in
                if case .media(let message) = action { message.timestamp.rawValue } else { 0 }
            } == [100, 123])

        // A ping request is answered at once with the same timestamp.
        actions = client.receive(server.control(.userControl(.pingRequest(timestamp: 1_234))))
        #expect(
            try readAfterChunkSize(actions, server: &server) == [
                RTMPControlMessage.userControl(.pingResponse(timestamp: 1_234)).message
            ])

        // UnpublishNotify ends the stream.
        actions = client.receive(server.status("NetStream.Play.UnpublishNotify"))
        #expect(actions == [.streamEnded(reason: "NetStream.Play.UnpublishNotify")])

        // Finishing deletes the stream.
        actions = client.finish()
        #expect(try commands(readAfterChunkSize(actions, server: &server)) == ["deleteStream"])
        #expect(client.phase == .finishing)
    }

    /// Acknowledgements go out each time the server's window fills, sequence numbers modulo 2^32.
    @Test func acknowledgesAtTheWindow() throws {
        var server = ScriptedServer()
        var client = try started(.play, server: &server)
        let window: UInt32 = 5_000_000
        var acknowledgements: [UInt32] = []
        let payload = [UInt8](repeating: 0, count: 60_000)
        var sent = 0
        while acknowledgements.count < 2 {
            let actions = client.receive(
                server.bytes(RTMPMessage(type: .video, streamID: 1, payload: payload), chunkStream: 6))
            sent += 1
            for message in try readAfterChunkSize(actions, server: &server) {
                if case .acknowledgement(let sequence) = try RTMPControlMessage(message) {
                    acknowledgements.append(sequence)
                }
            }
            #expect(sent < 400, "no acknowledgement after \(sent) messages")
            if sent >= 400 { break }
        }
        #expect(acknowledgements[0] >= window && acknowledgements[0] < window + 70_000)
        #expect(
            acknowledgements[1] - acknowledgements[0] >= window
                && acknowledgements[1] - acknowledgements[0] < window + 70_000)
    }

    /// §5.4.3: sequence numbers count modulo 2^32, and the window is measured across the wrap.
    @Test func sequenceNumbersWrap() {
        var window = AcknowledgementWindow(received: 0xFFFF_FF00)
        window.size = 0x200
        window.add(0x100)
        #expect(window.due() == nil && window.received == 0)
        window.add(0x100)
        #expect(window.due() == 0x100)
        #expect(window.due() == nil)
        window.add(0x1FF)
        #expect(window.due() == nil)
        window.add(1)
        #expect(window.due() == 0x300)
        window.size = nil
        window.add(0x1000)
        #expect(window.due() == nil)
    }

    @Test func publishesTags() throws {
        var server = ScriptedServer()
        var client = try started(.publish, server: &server)
        let metadata = FLVTag(type: .scriptData, timestamp: 0, data: FLVScriptData.metadata(["width": 320]).data)
        let hevc = FLVTag(type: .video, timestamp: 0, data: [0x90] + Array("hvc1".utf8) + [1, 2, 3])
        let audio = FLVTag(type: .audio, timestamp: 23, data: [0xAF, 0x01, 9])
        var messages: [RTMPMessage] = []
        for tag in [metadata, hevc, audio] { messages += try readAfterChunkSize(client.send(tag), server: &server) }
        #expect(messages.map(\.type) == [.amf0Data, .video, .audio])
        #expect(try FLVScriptData(data: messages[0].payload) == FLVScriptData.metadata(["width": 320]))
        #expect(try AMF0Decoder().decodeAll(messages[0].payload).first == "@setDataFrame")
        #expect(messages[1].payload == hevc.data, "Enhanced RTMP video passes through unchanged")
        #expect(messages[2].timestamp == RTMPTimestamp(23) && messages.allSatisfy { $0.streamID == 1 })

        let finish = try readAfterChunkSize(client.finish(), server: &server)
        #expect(try commands(finish) == ["FCUnpublish", "deleteStream"])
    }

    @Test func refusalsBecomeTypedErrorsWithTheServersText() throws {
        var server = ScriptedServer()
        var player = try started(.play, server: &server)
        var actions = player.receive(
            server.status("NetStream.Play.StreamNotFound", level: "error", description: "No such stream"))
        guard case .failed(let notFound) = actions.last else {
            Issue.record("no failure in \(actions)")
            return
        }
        #expect(notFound.kind == .streamNotFound && notFound.serverDescription == "No such stream")
        #expect(player.phase == .failed && player.receive([1, 2, 3]).isEmpty)

        server = ScriptedServer()
        var publisher = try started(.publish, server: &server)
        actions = publisher.receive(
            server.status("NetStream.Publish.BadName", level: "error", description: "Already publishing"))
        #expect(actions.last == .failed(.badName("show", code: nil, description: nil)))

        var client = try machine(.play)
        _ = client.start()
        _ = client.receive(ScriptedServer.handshakeBytes())
        server = ScriptedServer()
        actions = client.receive(
            server.command(
                "_error", 1,
                [.object(["level": "error", "code": "NetConnection.Connect.Rejected", "description": "Bad app"])]))
        guard case .failed(let rejected) = actions.last else {
            Issue.record("no failure in \(actions)")
            return
        }
        #expect(rejected.kind == .connectRejected && rejected.serverCode == "NetConnection.Connect.Rejected")
        #expect(rejected.description.contains("Bad app") && rejected.description.contains("'live'"))
    }

    @Test func sendingBeforePublishingIsAnError() throws {
        var client = try machine(.publish)
        #expect(client.send(FLVTag(type: .audio, timestamp: 0, data: [])) == [.failed(.invalidState(""))])
    }
}
