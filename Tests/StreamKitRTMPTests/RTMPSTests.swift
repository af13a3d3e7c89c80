import Foundation
import StreamKitCLI
import StreamKitRTMP
import StreamKitTestSupport
import Testing

/// `streamkit rtmp record` and `publish` over TLS, in-process: nginx-rtmp behind nginx's TLS
/// proxy (the `stream` module), with a CA and certificates the test makes.
@Suite(.requires(.nginxRTMP, .nginxStream, .openssl, .ffmpeg, .ffprobe))
struct RTMPSTests {
    /// The proxies of ``server()``, in order.
    private enum Proxy: Int {
        /// Signed by the test CA for localhost and 127.0.0.1.
        case trusted
        /// Signed by the test CA for another name.
        case otherHost
        /// Self-signed for localhost and 127.0.0.1.
        case selfSigned
    }

    private func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        await CommandRunner.runCapturing(arguments: arguments)
    }

    private func server() async throws -> (Nginx, TestCertificates) {
        let certificates = try await TestCertificates.make()
        let nginx = try await Nginx.rtmp(
            applications: [RTMPApplication(name: "live")],
            tlsProxies: [certificates.server, certificates.otherHost, certificates.selfSigned])
        return (nginx, certificates)
    }

    private func url(
        _ nginx: Nginx, _ proxy: Proxy, host: String = "localhost", stream: String
    ) -> String {
        nginx.rtmpsURL(host: host, proxy: proxy.rawValue, application: "live", stream: stream)
    }

    /// We record through one TLS proxy while we publish through it (to its IP address, the
    /// record to its name): the recording is the published file, whole.
    private func recordWhilePublishing(
        through proxy: Proxy, trust: [String], _ nginx: Nginx, stream: String
    ) async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds))
        let output = try TestRun.makeTemporaryDirectory("rtmps").appendingPathComponent("\(stream).flv")
        let recording = Task {
            await run(["rtmp", "record", url(nginx, proxy, stream: stream), "-o", output.path, "--json"] + trust)
        }
        try await nginx.waitForErrorLog("play: name='\(stream)'")
        let (publishCode, publishOutput, publishError) = await run(
            [
                "rtmp", "publish", fixture.entryFile.path, url(nginx, proxy, host: "127.0.0.1", stream: stream),
                "--realtime",
            ]
                + trust)
        #expect(publishCode == .success, "\(publishError)")
        #expect(publishOutput.contains("Published \(fixture.entryFile.path)"), "\(publishOutput)")
        let (code, text, error) = await recording.value
        #expect(code == .success, "\(error)")
        #expect(text.split(separator: "\n").last?.contains("\"endReason\":\"streamEnded\"") == true, "\(text)")
        RealPeers.expectFaithful(
            try await Probe.of(output), to: try await Probe.of(fixture.entryFile), "recorded over RTMPS")
    }

    @Test func recordsAndPublishesThroughTLS() async throws {
        let (nginx, certificates) = try await server()
        try await recordWhilePublishing(
            through: .trusted, trust: ["--ca-file", certificates.authority.path], nginx, stream: "tls")
        await nginx.stop()
    }

    @Test func insecureAcceptsAnUntrustedCertificate() async throws {
        let (nginx, _) = try await server()
        try await recordWhilePublishing(through: .selfSigned, trust: ["--insecure"], nginx, stream: "insecure")
        await nginx.stop()
    }

    /// The system's trust store is OpenSSL's default, which `SSL_CERT_FILE` replaces: the built
    /// executable with the test CA as its whole store publishes through the trusted proxy.
    @Test func sslCertFileReplacesTheSystemStore() async throws {
        let executable = try BuiltProducts.executable("streamkit")
        let (nginx, certificates) = try await server()
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds))
        let publisher = try ChildProcess(
            executable: executable,
            arguments: ["rtmp", "publish", fixture.entryFile.path, url(nginx, .trusted, stream: "env")],
            environment: ["SSL_CERT_FILE": certificates.authority.path], logName: "streamkit-publish")
        #expect(try await publisher.wait(timeout: .seconds(30)) == 0, "\(publisher.standardError)")
        #expect(nginx.errorLog.contains("publish: name='env'"))
        await nginx.stop()
    }

    /// A certificate for another name is refused before any RTMP byte is sent, naming both
    /// names, with exit code 1 and no file left.
    @Test func wrongHostIsRefused() async throws {
        let (nginx, certificates) = try await server()
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.flv, seconds: NginxRTMPTests.seconds))
        let directory = try TestRun.makeTemporaryDirectory("rtmps-wrong-host")
        let port = nginx.tlsPorts[Proxy.otherHost.rawValue]
        let trust = ["--ca-file", certificates.authority.path]

        let (code, output, error) = await run(
            [
                "rtmp", "record", url(nginx, .otherHost, stream: "x"), "-o",
                directory.appendingPathComponent("x.flv").path,
            ]
                + trust)
        #expect(code == .failure, "\(output)")
        #expect(
            error.contains(
                "certificate verify failed: hostname mismatch for localhost:\(port) (certificate is for other.example)"),
            "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        let (publishCode, _, publishError) = await run(
            ["rtmp", "publish", fixture.entryFile.path, url(nginx, .otherHost, host: "127.0.0.1", stream: "x")] + trust)
        #expect(publishCode == .failure)
        #expect(publishError.contains("hostname mismatch for 127.0.0.1:\(port)"), "\(publishError)")
        #expect(!nginx.errorLog.contains("connect: app='live'"), "nginx-rtmp saw a connect")
        await nginx.stop()
    }

    /// A self-signed certificate, and one from a CA nobody said to trust, are refused.
    @Test func untrustedCertificatesAreRefused() async throws {
        let (nginx, certificates) = try await server()
        let output = try TestRun.makeTemporaryDirectory("rtmps-untrusted").appendingPathComponent("x.flv")

        let (code, _, error) = await run([
            "rtmp", "record", url(nginx, .selfSigned, stream: "x"), "-o", output.path, "--ca-file",
            certificates.authority.path,
        ])
        #expect(code == .failure)
        let selfSignedPort = nginx.tlsPorts[Proxy.selfSigned.rawValue]
        #expect(
            error.contains(
                "certificate verify failed: certificate of localhost:\(selfSignedPort) not trusted (self-signed)"),
            "\(error)")

        // The system's trust store alone does not know the test CA.
        let (unknownCode, _, unknownError) = await run([
            "rtmp", "record", url(nginx, .trusted, stream: "x"), "-o", output.path,
        ])
        #expect(unknownCode == .failure)
        #expect(unknownError.contains("not trusted (unknown issuer)"), "\(unknownError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        await nginx.stop()
    }

    /// `rtmps://` to a port that does not speak TLS fails the handshake, promptly.
    @Test func plainRTMPPortFailsTheHandshake() async throws {
        let (nginx, _) = try await server()
        let started = ContinuousClock.now
        let connection = RTMPConnection(
            url: try RTMPURL("rtmps://127.0.0.1:\(nginx.rtmpPort!)/live/x"), role: .play,
            configuration: .init(socket: .init(connectTimeout: .seconds(2))))
        let error = await #expect(throws: RTMPError.self) { try await connection.open() }
        #expect(error?.kind == .tlsHandshakeFailed, "\(String(describing: error))")
        #expect(error?.detail.contains("127.0.0.1:\(nginx.rtmpPort!)") == true)
        #expect(ContinuousClock.now - started < .seconds(5))
        await nginx.stop()
    }
}
