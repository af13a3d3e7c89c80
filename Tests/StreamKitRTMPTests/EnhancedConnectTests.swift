import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// `connect` announces Enhanced RTMP codecs only when the media needs them, and a server that
/// drops such a `connect` gets a second one without them.
@Suite struct EnhancedConnectTests {
    static let url = try! RTMPURL("rtmp://127.0.0.1:1935/live/show")

    static func connectObject(_ codecs: EnhancedCodecs, forPublishing: Bool) throws -> AMF0Object {
        let command = RTMPCommand.connect(
            transactionID: 1, url: url, forPublishing: forPublishing, enhancedCodecs: codecs)
        return try #require(try RTMPCommand(message: command.message()).commandObject.objectValue)
    }

    @Test func aPlainConnectHasNoEnhancedFields() throws {
        for publishing in [false, true] {
            let object = try Self.connectObject(.none, forPublishing: publishing)
            for field in ["fourCcList", "videoFourCcInfoMap", "audioFourCcInfoMap"] {
                #expect(object[field] == nil, "\(field) sent when publishing is \(publishing)")
            }
            #expect(object["app"] == "live")
        }
    }

    @Test func enhancedFieldsNameTheCodecs() throws {
        let codecs = try #require(EnhancedCodecs(list: "hvc1, Opus,hvc1"))
        #expect(codecs == EnhancedCodecs(video: [.hevc], audio: [FourCC("Opus")]))
        let publishing = try Self.connectObject(codecs, forPublishing: true)
        #expect(publishing["fourCcList"] == .strictArray(["hvc1"]))
        #expect(publishing["videoFourCcInfoMap"] == .object(["hvc1": 2]))
        #expect(publishing["audioFourCcInfoMap"] == .object(["Opus": 2]))
        let playing = try Self.connectObject(EnhancedCodecs(video: [.av1, .vp9], audio: []), forPublishing: false)
        #expect(playing["fourCcList"] == .strictArray(["av01", "vp09"]))
        #expect(playing["videoFourCcInfoMap"] == .object(["av01": 4, "vp09": 4]))
        #expect(playing["audioFourCcInfoMap"] == nil)
    }

    @Test(arguments: ["hvc2", "HVC1", "opus", "hvc1,", "*"])
    func listsWithUnknownCodecsAreRefused(_ list: String) {
        // A trailing comma is only an empty entry, which is allowed.
        if list == "hvc1," {
            #expect(EnhancedCodecs(list: list) == EnhancedCodecs(video: [.hevc], audio: []))
        } else {
            #expect(EnhancedCodecs(list: list) == nil, "\(list)")
        }
    }

    @Test func aFileSaysWhichCodecsItNeeds() {
        let hevc = EnhancedRTMPTests.tags("hvc1")
        let opus = FLVTag(type: .audio, timestamp: 0, data: [0x90] + Array("Opus".utf8) + [1, 2])
        let avc = FLVTag(type: .video, timestamp: 0, data: [0x17, 0, 0, 0, 0, 1, 0x64])
        let aac = FLVTag(type: .audio, timestamp: 0, data: [0xAF, 0, 0x12, 0x10])
        #expect(EnhancedCodecs(tags: hevc + [opus]) == EnhancedCodecs(video: [.hevc], audio: [FourCC("Opus")]))
        #expect(EnhancedCodecs(tags: [avc, aac]).isEmpty)
    }

    /// A machine past the handshake, waiting for `connect`'s answer.
    static func connectingMachine(
        _ codecs: EnhancedCodecs, server: inout ScriptedServer
    ) -> RTMPClientStateMachine {
        var random = SystemRandomNumberGenerator()
        var machine = RTMPClientStateMachine(
            url: url, role: .publish, configuration: .init(enhancedCodecs: codecs), uptime: 0, random: &random)
        _ = machine.start()
        _ = machine.receive(ScriptedServer.handshakeBytes())
        #expect(machine.phase == .connecting)
        return machine
    }

    @Test func onlyAnEnhancedConnectThatTheServerDroppedIsTriedAgain() throws {
        var server = ScriptedServer()
        let hevc = EnhancedCodecs(video: [.hevc], audio: [])
        let closed = RTMPError.connectionClosed("the server closed the connection")
        let lost = RTMPError.connectionLost(SystemError(code: 104, operation: "recv"))
        let enhanced = Self.connectingMachine(hevc, server: &server)
        for error in [closed, lost] {
            let retry = enhanced.retryConfiguration(after: error)
            #expect(retry?.enhancedCodecs == EnhancedCodecs.none, "\(error)")
            #expect(retry?.handshake == enhanced.configuration.handshake)
        }
        let timeout = enhanced.retryConfiguration(after: .responseTimeout("connect", after: .seconds(10)))
        #expect(timeout == nil)
        let plain = Self.connectingMachine(.none, server: &server).retryConfiguration(after: closed)
        #expect(plain == nil)

        // Dropped during the handshake: the connect was never sent.
        var random = SystemRandomNumberGenerator()
        var handshaking = RTMPClientStateMachine(
            url: Self.url, role: .publish, configuration: .init(enhancedCodecs: hevc), uptime: 0, random: &random)
        _ = handshaking.start()
        let beforeConnect = handshaking.retryConfiguration(after: closed)
        #expect(beforeConnect == nil)

        // Refused: the machine has failed, in the connecting phase.
        var refused = Self.connectingMachine(hevc, server: &server)
        let actions = refused.receive(
            server.command("_error", 1, [.object(["level": "error", "code": "NetConnection.Connect.Rejected"])]))
        let failure = try #require(actions.lazy.compactMap { if case .failed(let e) = $0 { e } else { nil } }.first)
        let (phase, failedIn) = (refused.phase, refused.failedIn)
        #expect(phase == .failed && failedIn == .connecting)
        let afterRefusal = refused.retryConfiguration(after: failure)
        #expect(afterRefusal?.enhancedCodecs == EnhancedCodecs.none)
    }

    /// Writes `tags` to an FLV file.
    static func file(_ tags: [FLVTag], name: String) throws -> URL {
        let path = try TestRun.makeTemporaryDirectory("enhanced-connect").appendingPathComponent(name)
        let writer = try FLVFileWriter(path: path.path)
        for tag in tags { try writer.write(tag) }
        try writer.finish(duration: 2)
        return path
    }

    /// An enhanced-HEVC file: the first connect announces `hvc1`, the strict server drops it on
    /// the strict array, and the second connect, without it, publishes every frame.
    @Test func anEnhancedFileIsPublishedToAServerThatFailsOnItsConnect() async throws {
        let tags = EnhancedRTMPTests.tags("hvc1")
        let file = try Self.file(tags, name: "hevc.flv")
        let server = try StrictRTMPServer()
        defer { Task { await server.stop() } }
        let progress = try await RTMPPublisher(url: try RTMPURL(server.url(stream: "hevc"))).publish(file: file.path)
        #expect(progress.tags == tags.count)
        _ = await eventually(timeout: .seconds(5)) { server.sessions.last?.videoMessages == tags.count }
        let sessions = server.sessions
        try #require(sessions.count == 2, "\(sessions)")
        #expect(sessions[0].refusal?.contains("unknown AMF0 type marker 10") == true, "\(sessions[0])")
        #expect(sessions[1].refusal == nil && !sessions[1].connectKeys.contains("fourCcList"))
        #expect(sessions[1].published == "hevc")
        #expect(sessions[1].mediaBytes == tags.reduce(0) { $0 + $1.data.count })
    }

    /// A file of legacy AVC and AAC: one plain connect, as ffmpeg sends.
    @Test func aLegacyFileConnectsOnceWithoutEnhancedFields() async throws {
        var tags = [
            FLVTag(type: .video, timestamp: 0, data: [0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1F, 0xFF]),
            FLVTag(type: .audio, timestamp: 0, data: [0xAF, 0, 0x12, 0x10]),
        ]
        for frame in 0..<40 {
            tags.append(FLVTag(type: .video, timestamp: UInt32(frame * 40), data: [0x27, 1, 0, 0, 0] + [UInt8(frame)]))
            tags.append(FLVTag(type: .audio, timestamp: UInt32(frame * 40), data: [0xAF, 1, UInt8(frame), 7]))
        }
        let file = try Self.file(tags, name: "avc.flv")
        let server = try StrictRTMPServer()
        defer { Task { await server.stop() } }
        _ = try await RTMPPublisher(url: try RTMPURL(server.url(stream: "avc"))).publish(file: file.path)
        _ = await eventually(timeout: .seconds(5)) { server.sessions.last?.audioMessages == 41 }
        let sessions = server.sessions
        try #require(sessions.count == 1, "\(sessions)")
        #expect(sessions[0].refusal == nil && sessions[0].videoMessages == 41)
        #expect(sessions[0].connectKeys.contains("app") && !sessions[0].connectKeys.contains("fourCcList"))
    }
}
