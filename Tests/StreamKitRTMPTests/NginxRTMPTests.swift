import Foundation
import StreamKitCLI
import StreamKitCore
import StreamKitFLV
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// Against real nginx-rtmp, with ffmpeg and rtmpdump as the other side.
@Suite(.requires(.nginxRTMP, .ffmpeg, .ffprobe))
struct NginxRTMPTests {
    static let seconds = 4

    private func fixture() async throws -> (URL, Probe) {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: Self.seconds))
        return (fixture.entryFile, try await Probe.of(fixture.entryFile))
    }

    /// ffmpeg publishes; we record, and rtmpdump records the same stream beside us.
    @Test(.requires(.rtmpdump))
    func recordsWhatFFmpegPublishesBesideRtmpdump() async throws {
        let (source, sourceProbe) = try await fixture()
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "cam")
        let directory = try TestRun.makeTemporaryDirectory("rtmp-record")
        let ours = directory.appendingPathComponent("ours.flv")
        let theirs = directory.appendingPathComponent("rtmpdump.flv")

        let recorder = RTMPRecorder(url: try RTMPURL(url))
        let recording = Task { try await recorder.record(to: ours.path) }
        let rtmpdump = try RealPeers.rtmpdump(url, to: theirs)
        try await nginx.waitForErrorLog("play: name='cam'", count: 2)
        let publisher = try RealPeers.ffmpegPublisher(source, to: url)

        let summary = try await recording.value
        #expect(try await publisher.wait(timeout: .seconds(30)) == 0)
        _ = try await rtmpdump.wait(timeout: .seconds(30))
        guard case .streamEnded = summary.endReason else {
            Issue.record("ended by \(summary.endReason)")
            return
        }
        let probe = try await Probe.of(ours)
        RealPeers.expectFaithful(probe, to: sourceProbe, "our recording")
        #expect(summary.progress.videoFrames == probe.videoPackets)

        let reference = try await Probe.of(theirs)
        #expect(reference.codecs == probe.codecs)
        #expect(
            abs(reference.duration - probe.duration) <= 0.5,
            "rtmpdump \(reference.duration) s, ours \(probe.duration) s")
        #expect(
            probe.videoPackets >= reference.videoPackets - 2,
            "ours \(probe.videoPackets), rtmpdump \(reference.videoPackets)")
        await nginx.stop()
    }

    /// We publish at the file's pace; ffmpeg records from nginx.
    @Test func publishesForFFmpegToRecord() async throws {
        let (source, sourceProbe) = try await fixture()
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "out")
        let recorded = try TestRun.makeTemporaryDirectory("rtmp-publish").appendingPathComponent("ffmpeg.flv")
        let recorder = try RealPeers.ffmpegRecorder(url, to: recorded)
        try await nginx.waitForErrorLog("play: name='out'")

        let started = ContinuousClock.now
        let progress = try await RTMPPublisher(url: try RTMPURL(url), options: .init(realtime: true)).publish(
            file: source.path)
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .seconds(Self.seconds - 1), "--realtime took \(elapsed)")
        #expect(progress.fileBytes == progress.fileSize && progress.bytesSent > progress.fileSize * 9 / 10)
        // What is due in one tick leaves in one write, not a write per tag.
        #expect(progress.writes * 10 < progress.tags * 8, "\(progress.writes) writes for \(progress.tags) tags")
        #expect(try await recorder.wait(timeout: .seconds(30)) == 0)
        RealPeers.expectFaithful(try await Probe.of(recorded), to: sourceProbe, "ffmpeg's recording of our stream")
        #expect(nginx.errorLog.contains("publish: name='out'") && nginx.errorLog.contains("deleteStream"))
        await nginx.stop()
    }

    /// Publishing and recording at once: we publish one stream while we record it, and ffmpeg records it too.
    @Test func publishesAndRecordsAtOnce() async throws {
        let (source, sourceProbe) = try await fixture()
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "both")
        let directory = try TestRun.makeTemporaryDirectory("rtmp-both")
        let ours = directory.appendingPathComponent("ours.flv")
        let recording = Task { try await RTMPRecorder(url: try RTMPURL(url)).record(to: ours.path) }
        try await nginx.waitForErrorLog("play: name='both'")
        _ = try await RTMPPublisher(url: try RTMPURL(url), options: .init(realtime: true)).publish(file: source.path)
        let summary = try await recording.value
        #expect(summary.progress.reconnects == 0)
        RealPeers.expectFaithful(try await Probe.of(ours), to: sourceProbe, "our recording of our stream")
        await nginx.stop()
    }

    /// Unpaced publishing goes as fast as nginx reads: a 20-second file in under half that. (With
    /// the 4-second file and a 3.5 s bound, a test process stalled for a few seconds failed it.)
    @Test func publishesUnpacedAsFastAsTheServerReads() async throws {
        let seconds = 20
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: seconds)).entryFile
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let started = ContinuousClock.now
        let progress = try await RTMPPublisher(url: try RTMPURL(nginx.rtmpURL(application: "live", stream: "fast")))
            .publish(file: source.path)
        #expect(ContinuousClock.now - started < .seconds(seconds / 2), "paced like real time")
        #expect(progress.mediaSeconds >= Double(seconds) - 0.1)
        try await nginx.waitForErrorLog("deleteStream")
        await nginx.stop()
    }

    /// The Flash Player 9 digest handshake: nginx signs S1 and S2 and we verify both.
    @Test func digestHandshakeWithNginx() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        var configuration = RTMPConnection.Configuration()
        configuration.client.handshake = .digest
        let connection = RTMPConnection(
            url: try RTMPURL(nginx.rtmpURL(application: "live", stream: "digest")), role: .publish,
            configuration: configuration)
        let session = try await connection.open()
        #expect(session.handshake.serverDigestVerified == true && session.handshake.serverResponseVerified)
        #expect(session.startStatus.code == "NetStream.Publish.Start" && session.streamID > 0)
        await connection.finish()
        await nginx.stop()
    }

    /// nginx-rtmp reads a `connect` that announces Enhanced RTMP codecs (it skips what it does not
    /// know): one connection, which keeps them.
    @Test func nginxAcceptsAnEnhancedConnect() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        var configuration = RTMPConnection.Configuration()
        configuration.client.enhancedCodecs = EnhancedCodecs(video: [.hevc, .av1], audio: [FourCC("Opus")])
        let connection = RTMPConnection(
            url: try RTMPURL(nginx.rtmpURL(application: "live", stream: "enhanced")), role: .publish,
            configuration: configuration)
        let session = try await connection.open()
        #expect(session.enhancedCodecs == configuration.client.enhancedCodecs)
        #expect(session.startStatus.code == "NetStream.Publish.Start")
        await connection.finish()
        await nginx.stop()
    }

    /// Application instances with slashes and query strings reach nginx as it expects them.
    @Test func appInstancesAndQueryStrings() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let port = nginx.rtmpPort!
        for (text, logged) in [
            ("rtmp://127.0.0.1:\(port)/live/_definst_/inst", "publish: name='inst'"),
            ("rtmp://127.0.0.1:\(port)/live?token=abc/tok", "app='live' args='token=abc'"),
            ("rtmp://127.0.0.1:\(port)/live/keyed?key=secret", "publish: name='keyed' args='key=secret'"),
        ] {
            let connection = RTMPConnection(url: try RTMPURL(text), role: .publish)
            try await connection.open()
            await connection.finish()
            #expect(nginx.errorLog.contains(logged), "\(text)")
        }
        // An unknown application: nginx closes the connection without an _error.
        let unknown = RTMPConnection(url: try RTMPURL("rtmp://127.0.0.1:\(port)/nosuch/x"), role: .play)
        await #expect(throws: RTMPError.connectionClosed("")) { try await unknown.open() }
        await nginx.stop()
    }

    /// A connection dropped mid-stream is reopened once and the file continues.
    @Test func reconnectsOnceAfterADrop() async throws {
        // A keyframe every second, so the recording resumes soon after the reconnect; 12 s, so
        // that the reconnect's wait (1 s, and more on a loaded machine) costs well under half.
        let source = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: 12, segmentSeconds: 1)).entryFile
        let sourceProbe = try await Probe.of(source)
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        // The first connection is reset after about a third of the stream's bytes.
        let size = try FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int ?? 0
        let relay = try TCPRelay(upstreamPort: nginx.rtmpPort!) { $0 == 0 ? size / 3 : nil }
        let url = "rtmp://127.0.0.1:\(relay.port)/live/drop"
        let recorded = try TestRun.makeTemporaryDirectory("rtmp-drop").appendingPathComponent("drop.flv")
        let recording = Task { try await RTMPRecorder(url: try RTMPURL(url)).record(to: recorded.path) }
        try await nginx.waitForErrorLog("play: name='drop'")
        let publisher = try RealPeers.ffmpegPublisher(source, to: nginx.rtmpURL(application: "live", stream: "drop"))
        let summary = try await recording.value
        _ = try await publisher.wait(timeout: .seconds(30))
        #expect(relay.cutCount == 1 && relay.connectionCount == 2)
        #expect(summary.progress.reconnects == 1)
        let probe = try await Probe.of(recorded)
        #expect(probe.codecs == sourceProbe.codecs)
        #expect(
            zip(probe.videoTimes, probe.videoTimes.dropFirst()).allSatisfy { $0 < $1 }, "timestamps keep increasing")
        // Frames are lost while reconnecting and waiting for the next keyframe, not more than a few GOPs.
        #expect(probe.videoPackets >= sourceProbe.videoPackets / 2 && probe.videoPackets < sourceProbe.videoPackets)
        await relay.stop()
        await nginx.stop()
    }
}

/// `streamkit rtmp record` and `publish` run in-process against nginx: output and exit codes.
@Suite(.requires(.nginxRTMP, .ffmpeg, .ffprobe))
struct RTMPCommandLineTests {
    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(arguments: arguments)
    }

    @Test func recordForADurationWhileWePublish() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds))
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "cli")
        let output = try TestRun.makeTemporaryDirectory("rtmp-cli").appendingPathComponent("cli.flv")
        let recording = Task { await run(["rtmp", "record", url, "-o", output.path, "--duration", "2", "--json"]) }
        try await nginx.waitForErrorLog("play: name='cli'")
        let (publishCode, publishOutput, publishError) = await run([
            "rtmp", "publish", fixture.entryFile.path, url, "--realtime",
        ])
        #expect(publishCode == .success, "\(publishError)")
        #expect(publishOutput.contains("Published \(fixture.entryFile.path)"))
        let (code, text, error) = await recording.value
        #expect(code == .success, "\(error)")
        let lines = text.split(separator: "\n")
        #expect(lines.last?.hasPrefix("{") == true && lines.last?.contains("\"event\":\"result\"") == true, "\(text)")
        #expect(lines.last?.contains("the requested duration was reached") == true)
        let probe = try await Probe.of(output)
        #expect(abs(probe.duration - 2) <= 0.5, "recorded \(probe.duration) s")
        await nginx.stop()
    }

    /// Ctrl-C stops a recording with a complete file and exit code 130 (the built executable, signalled).
    @Test func interruptFinishesTheFileAndExits130() async throws {
        let executable = URL(fileURLWithPath: try BuiltProducts.executable("streamkit"))
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds))
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let url = nginx.rtmpURL(application: "live", stream: "stop")
        let output = try TestRun.makeTemporaryDirectory("rtmp-sigint").appendingPathComponent("stopped.flv")
        let recorder = try ChildProcess(
            executable: executable.path, arguments: ["rtmp", "record", url, "-o", output.path],
            logName: "streamkit-record")
        try await nginx.waitForErrorLog("play: name='stop'")
        let publisher = try RealPeers.ffmpegPublisher(fixture.entryFile, to: url)
        // The recording has begun once the recorder reports its first media (ffmpeg alone can
        // take seconds to start on a loaded machine); from then the publisher sends in real
        // time, so the sleep that follows is media time, within the fixture's four seconds.
        let started = ContinuousClock.now + .seconds(30)
        while !recorder.standardOutput.contains("recording stop:"), ContinuousClock.now < started {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .seconds(1))
        recorder.signal(SIGINT)
        #expect(try await recorder.wait(timeout: .seconds(10)) == 130, "\(recorder.standardError)")
        #expect(recorder.standardOutput.contains("interrupted"), "\(recorder.standardOutput)")
        let probe = try await Probe.of(output)
        #expect(probe.videoPackets > 10 && probe.duration > 0.5 && probe.duration < Double(NginxRTMPTests.seconds))
        await publisher.stop()
        await nginx.stop()
    }

    @Test func failuresExit1NamingWhatFailed() async throws {
        let nginx = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let output = try TestRun.makeTemporaryDirectory("rtmp-cli-fail").appendingPathComponent("none.flv")
        // Nobody publishes: nginx starts the play anyway, and the idle timeout ends it.
        let (idleCode, _, idleError) = await run([
            "rtmp", "record", nginx.rtmpURL(application: "live", stream: "nobody"), "-o", output.path, "--idle-timeout",
            "1",
        ])
        #expect(
            idleCode == .failure && idleError.contains("idle timeout") && idleError.contains("nobody"), "\(idleError)")
        let (appCode, _, appError) = await run([
            "rtmp", "record", nginx.rtmpURL(application: "nosuch", stream: "x"), "-o", output.path,
        ])
        #expect(appCode == .failure && appError.contains("application 'nosuch'"), "\(appError)")
        let notFLV = output.deletingLastPathComponent().appendingPathComponent("text.flv")
        try Data("not a video".utf8).write(to: notFLV)
        let (fileCode, _, fileError) = await run([
            "rtmp", "publish", notFLV.path, nginx.rtmpURL(application: "live", stream: "x"),
        ])
        #expect(fileCode == .failure && fileError.contains("FLV signature"), "\(fileError)")
        await nginx.stop()
    }
}
