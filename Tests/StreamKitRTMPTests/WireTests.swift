import StreamKitAMF
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import Testing

@Suite struct TimestampTests {
    @Test func serialArithmetic() {
        #expect(RTMPTimestamp(1) < RTMPTimestamp(2))
        #expect(RTMPTimestamp(0xFFFF_FFF0) < RTMPTimestamp(0x10))
        #expect(!(RTMPTimestamp(0x10) < RTMPTimestamp(0xFFFF_FFF0)))
        #expect(RTMPTimestamp(0).distance(to: RTMPTimestamp(0x7FFF_FFFF)) == 0x7FFF_FFFF)
        #expect(RTMPTimestamp(0).distance(to: RTMPTimestamp(0x8000_0000)) == -0x8000_0000)
        #expect(RTMPTimestamp(0xFFFF_FFFF).advanced(by: 2) == RTMPTimestamp(1))
    }

    @Test func unwrapperFollowsTheWrap() {
        var unwrapper = RTMPTimelineUnwrapper()
        let positions = [0xFFFF_FF00, 0xFFFF_FFF0, 0x10, 0x05, 0x1000].map { unwrapper.extend(RTMPTimestamp($0)) }
        #expect(positions == [0xFFFF_FF00, 0xFFFF_FFF0, 0x1_0000_0010, 0x1_0000_0005, 0x1_0000_1000])
    }
}

@Suite struct ControlMessageTests {
    @Test(arguments: [
        (RTMPControlMessage.setChunkSize(4_096), "00001000"),
        (.abort(chunkStreamID: 5), "00000005"),
        (.acknowledgement(sequenceNumber: 0xFFFF_FFFF), "FFFFFFFF"),
        (.windowAcknowledgementSize(2_500_000), "002625A0"),
        (.setPeerBandwidth(2_500_000, limitType: 2), "002625A0 02"),
        (.userControl(.streamBegin(streamID: 1)), "0000 00000001"),
        (.userControl(.streamEOF(streamID: 1)), "0001 00000001"),
        (.userControl(.streamDry(streamID: 1)), "0002 00000001"),
        (.userControl(.setBufferLength(streamID: 1, milliseconds: 3_000)), "0003 00000001 00000BB8"),
        (.userControl(.streamIsRecorded(streamID: 1)), "0004 00000001"),
        (.userControl(.pingRequest(timestamp: 77)), "0006 0000004D"),
        (.userControl(.pingResponse(timestamp: 77)), "0007 0000004D"),
        (.userControl(.other(eventType: 31, data: [1])), "001F 01"),
    ])
    func encodesAndDecodes(_ control: RTMPControlMessage, _ hex: String) throws {
        let message = control.message
        #expect(message.payload == hexBytes(hex) && message.streamID == 0)
        #expect(try RTMPControlMessage(message) == control)
    }

    @Test func shortPayloadsFail() throws {
        #expect(throws: RTMPError.protocolViolation("")) {
            try RTMPControlMessage(RTMPMessage(type: .acknowledgement, payload: [1]))
        }
        #expect(throws: RTMPError.protocolViolation("")) {
            try RTMPControlMessage(RTMPMessage(type: .userControl, payload: [0, 6, 1]))
        }
        #expect(try RTMPControlMessage(RTMPMessage(type: .audio, payload: [])) == nil)
    }
}

@Suite struct RTMPURLTests {
    @Test(arguments: [
        ("rtmp://example.com/live/show", "example.com", UInt16(1935), "live", "show", "rtmp://example.com/live"),
        ("rtmp://127.0.0.1:19350/live/show", "127.0.0.1", 19350, "live", "show", "rtmp://127.0.0.1:19350/live"),
        ("RTMP://h/live/_definst_/show", "h", 1935, "live/_definst_", "show", "rtmp://h/live/_definst_"),
        ("rtmp://h/app/inst/deeper/show", "h", 1935, "app/inst/deeper", "show", "rtmp://h/app/inst/deeper"),
        ("rtmp://h/live/show?key=abc&x=1", "h", 1935, "live", "show?key=abc&x=1", "rtmp://h/live"),
        ("rtmp://h/app?token=abc/show", "h", 1935, "app?token=abc", "show", "rtmp://h/app?token=abc"),
        (
            "rtmp://h/app?token=abc/inst/show?key=1", "h", 1935, "app?token=abc/inst", "show?key=1",
            "rtmp://h/app?token=abc/inst"
        ),
        ("rtmp://[::1]:1936/live/show", "::1", 1936, "live", "show", "rtmp://[::1]:1936/live"),
        ("rtmp://h/live/u9#frag", "h", 1935, "live", "u9", "rtmp://h/live"),
        ("rtmp://h/live/show?key=1#frag/x", "h", 1935, "live", "show?key=1", "rtmp://h/live"),
        ("rtmps://example.com/live/show", "example.com", 443, "live", "show", "rtmps://example.com/live"),
        ("RTMPS://h:4443/app/inst/show", "h", 4443, "app/inst", "show", "rtmps://h:4443/app/inst"),
    ])
    func splitsAppAndStream(
        _ text: String, _ host: String, _ port: UInt16, _ application: String, _ stream: String, _ tcURL: String
    ) throws {
        let url = try RTMPURL(text)
        #expect(url.host == host && url.port == port)
        #expect(url.application == application && url.streamName == stream)
        #expect(url.tcURL == tcURL)
        #expect(url.isSecure == tcURL.hasPrefix("rtmps:"))
    }

    @Test(arguments: [
        "http://h/live/show", "rtmpt://h/live/show", "rtmps://h/live", "rtmp://h", "rtmp://h/live", "rtmp://h/live/",
        "rtmp:///live/show",
        "rtmp://h:0/live/show", "rtmp://h:99999/live/show", "not a url",
    ])
    func rejectsBadURLs(_ text: String) throws {
        #expect(throws: RTMPError.invalidURL("", "")) { try RTMPURL(text) }
    }

    /// RTMP has no place for credentials: they are refused by name, and the password is not repeated.
    @Test func refusesCredentialsWithoutRepeatingThem() throws {
        let error = #expect(throws: RTMPError.self) { try RTMPURL("rtmp://user:s3cret@h:1936/live/show") }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("credentials") && !text.contains("s3cret") && !text.contains("no host"), "\(text)")
    }
}

@Suite struct CommandTests {
    @Test func connectCarriesAppAndTcUrl() throws {
        let url = try RTMPURL("rtmp://127.0.0.1:1936/live/_definst_/show?k=1")
        let command = RTMPCommand.connect(transactionID: 1, url: url, forPublishing: false)
        let decoded = try RTMPCommand(message: command.message())
        #expect(decoded.name == "connect" && decoded.transactionID == 1)
        let object = try #require(decoded.commandObject.objectValue)
        #expect(object["app"] == "live/_definst_" && object["tcUrl"] == "rtmp://127.0.0.1:1936/live/_definst_")
        #expect(object["fourCcList"] == nil, "a plain connect announces no Enhanced RTMP codecs")
    }

    @Test func statusFromAnswers() throws {
        let info: AMF0Value = .object([
            "level": "error", "code": "NetStream.Play.StreamNotFound", "description": "No such stream",
        ])
        let message = RTMPCommand(name: "onStatus", transactionID: 0, arguments: [info]).message(streamID: 1)
        let command = try RTMPCommand(message: message)
        let status = try #require(RTMPStatus([command.commandObject] + command.arguments))
        #expect(
            status.code == "NetStream.Play.StreamNotFound" && status.description == "No such stream" && status.isError)
        // AMF3 command messages: a format byte, then AMF0.
        var amf3 = message
        amf3.type = .amf3Command
        amf3.payload = [0] + message.payload
        #expect(try RTMPCommand(message: amf3) == command)
    }

    @Test func badAMFIsAMalformedMessage() throws {
        #expect(throws: RTMPError.malformedMessage("")) {
            try RTMPCommand(message: RTMPMessage(type: .amf0Command, payload: [0x02, 0xFF]))
        }
        #expect(throws: RTMPError.malformedMessage("")) {
            try RTMPCommand(message: RTMPMessage(type: .amf0Command, payload: [0x05]))
        }
    }

    @Test func amf3DataMessagesBecomeAMF0ScriptData() throws {
        // Plain AMF3: "onMetaData", then an anonymous dynamic object {width: 320}.
        var body = ByteBuffer()
        var encoder = AMF3Encoder()
        encoder.encode(.string("onMetaData"), into: &body)
        encoder.encode(.object(AMF3Object(dynamic: [AMF3Member(name: "width", value: .integer(320))])), into: &body)
        let plain = try RTMPDataMessage.scriptData(
            from: RTMPMessage(type: .amf3Data, payload: Array(body.readableBytesView)))
        #expect(plain == FLVScriptData(name: "onMetaData", values: [.object(["width": 320])]))
        // A format byte, then AMF0 with an avmplus switch.
        var mixed = ByteBuffer(bytes: [0])
        mixed.writeBytes(
            AMF0Encoder.encode([
                "@setDataFrame", "onMetaData",
                .avmPlus(.array(AMF3Array(associative: [AMF3Member(name: "fps", value: .double(25))]))),
            ]))
        let converted = try RTMPDataMessage.scriptData(
            from: RTMPMessage(type: .amf3Data, payload: Array(mixed.readableBytesView)))
        #expect(converted == FLVScriptData(name: "onMetaData", values: [.ecmaArray(["fps": 25])]))
    }
}

@Suite struct AggregateMessageTests {
    /// Sub-messages keep their distance from the first one, offset to the aggregate's timestamp.
    @Test func unpacksWithRebasedTimestamps() throws {
        let parts = [
            RTMPMessage(type: .video, streamID: 9, timestamp: RTMPTimestamp(1_000), payload: [1]),
            RTMPMessage(type: .audio, streamID: 9, timestamp: RTMPTimestamp(1_023), payload: [2, 2]),
            RTMPMessage(type: .video, streamID: 9, timestamp: RTMPTimestamp(1_040), payload: []),
        ]
        var aggregate = AggregateMessage.pack(parts)
        aggregate.timestamp = RTMPTimestamp(0xFFFF_FFF0)
        let unpacked = try AggregateMessage.unpack(aggregate)
        #expect(unpacked.map(\.timestamp.rawValue) == [0xFFFF_FFF0, 0x7, 0x18])
        #expect(unpacked.map(\.payload) == [[1], [2, 2], []] && unpacked.allSatisfy { $0.streamID == 9 })
    }

    @Test func subMessagesMustFit() throws {
        // A sub-message announcing 2^24 - 1 bytes inside a 20-byte aggregate.
        let body = hexBytes("09 FFFFFF 000000 00 000000 0102030405 00000000 00")
        #expect(throws: RTMPError.protocolViolation("")) {
            try AggregateMessage.unpack(RTMPMessage(type: .aggregate, payload: body))
        }
        #expect(throws: RTMPError.protocolViolation("")) {
            try AggregateMessage.unpack(RTMPMessage(type: .aggregate, payload: [9, 0, 0]))
        }
        let nested = AggregateMessage.pack([RTMPMessage(type: .aggregate, payload: [])])
        #expect(throws: RTMPError.protocolViolation("")) { try AggregateMessage.unpack(nested) }
    }
}
