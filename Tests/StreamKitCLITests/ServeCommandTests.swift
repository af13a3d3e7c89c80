import Foundation
import StreamKitCLI
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `streamkit serve`: help, usage errors, the home directory, and the real process's lifetime.
@Suite struct ServeCommandTests {
    private func run(_ arguments: [String], environment: [String: String]? = nil) async -> (ExitCode, String, String) {
        // A home of its own: serve opens the cache there.
        let home = (try? TestRun.makeTemporaryDirectory("serve-home").path) ?? "/nonexistent"
        return await CommandRunner.runCapturing(
            arguments: arguments, environment: environment ?? ["STREAMKIT_HOME": home])
    }

    @Test func helpSnapshot() async {
        let (code, output, _) = await run(["serve", "--help"])
        #expect(code == .success)
        #expect(
            output == """
                OVERVIEW: Serve the library over HTTP for offline playback, and the caching
                proxy.

                Serves every downloaded item under /library/ID/index.m3u8 and a page listing
                them at /, on 127.0.0.1 unless --host says otherwise, and the caching proxy:
                /proxy/file?url=URL and /proxy/hls?url=URL play remote media through the cache
                ($STREAMKIT_HOME/cache), so that it plays again offline. Prints the base URL,
                the access token that routes changing state require (every route, reads
                included, when --host is not loopback), and a sign-in URL (?token=) that sets it
                as a cookie, then runs until Ctrl-C: the first Ctrl-C (or SIGTERM) finishes the
                responses in flight and exits 0; a second one stops at once and exits 130.

                The page and the JSON API under /api/ (docs/API.md) add, start, stop, retry and
                remove queue tasks, and pin and remove cache entries. Tasks run in the process
                that runs the queue: `queue run`, or serve itself with --run-queue.

                USAGE: streamkit serve [--root <dir>] [--home <dir>] [--host <address>]
                       [--port <port>] [--allow-origin <origin> ...] [--host-name <name> ...]
                       [--cache-limit <size>] [--cache-key <mode>] [--proxy-allow <ranges> ...]
                       [--proxy-deny <ranges> ...] [--run-queue]

                OPTIONS:
                  --root <dir>            The library to serve (default:
                                          $STREAMKIT_HOME/library).
                  --home <dir>            StreamKit's data (default: $STREAMKIT_HOME,
                                          $XDG_DATA_HOME/streamkit, ~/.local/share/streamkit).
                  --host <address>        The address to listen on; not loopback: reachable from
                                          the network. (default: 127.0.0.1)
                  --port <port>           The port to listen on; 0 picks a free one. (default:
                                          12345)
                  --allow-origin <origin>
                                          A web origin whose pages may fetch from the server
                                          (CORS).
                  --host-name <name>      Another name clients may use for this server in Host.
                  --cache-limit <size>    The proxy cache's byte cap, such as 500M or 2G,
                                          remembered for later commands (default: 1G).
                  --cache-key <mode>      How cache entries are named, remembered for later
                                          commands: url (default), signed (without token,
                                          Expires, Signature and the like), or ignore:NAME,NAME
                                          (without those query parameters).
                  --proxy-allow <ranges>  The only private and loopback addresses the proxy may
                                          connect to, such as 192.168.1.0/24,127.0.0.1 (default:
                                          all of them; public addresses stay allowed).
                  --proxy-deny <ranges>   Addresses the proxy may not connect to, such as
                                          10.0.0.0/8,fd00::/8.
                  --run-queue             Also run the download queue, as `queue run` does, so
                                          that tasks added from the page run.
                  -h, --help              Show help information.

                EXAMPLES:
                  Serve the library on the default port:
                    streamkit serve
                  Serve a directory on a free port:
                    streamkit serve --root ~/Videos/hls --port 0

                """)
        let (_, viaHelp, _) = await run(["help", "serve"])
        #expect(viaHelp == output)
    }

    @Test(arguments: [
        (["serve", "--port", "70000"], "--port must be between 0 and 65535, got 70000"),
        (["serve", "--port", "-1"], "--port must be between 0 and 65535, got -1"),
        (["serve", "--port", "http"], "invalid value 'http' for --port: expected an integer"),
        (["serve", "--host", "example.com"], "--host must be an IP address or localhost, got 'example.com'"),
        (
            ["serve", "--root", "/nonexistent/streamkit-library"],
            "--root: '/nonexistent/streamkit-library' is not a directory"
        ),
        (
            ["serve", "--allow-origin", "example.com"],
            "--allow-origin takes an origin such as http://example.com:8080, got 'example.com'"
        ),
        (["serve", "--bogus"], "unknown option '--bogus'"),
        (["serve", "extra"], "unexpected argument 'extra'"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) async {
        let (code, output, error) = await run(arguments)
        #expect(code == .usage)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("error: \(message)\n"), "stderr was: \(error)")
        #expect(error.contains("usage: streamkit serve"))
    }

    @Test func homeResolvesFromOptionEnvironmentXDGAndHOME() {
        #expect(StreamKitHome.resolve(override: "/a", environment: ["STREAMKIT_HOME": "/b"]) == "/a")
        #expect(
            StreamKitHome.resolve(override: nil, environment: ["STREAMKIT_HOME": "/b", "XDG_DATA_HOME": "/c"]) == "/b")
        #expect(
            StreamKitHome.resolve(override: nil, environment: ["XDG_DATA_HOME": "/c", "HOME": "/h"]) == "/c/streamkit")
        #expect(StreamKitHome.resolve(override: nil, environment: ["HOME": "/h"]) == "/h/.local/share/streamkit")
        #expect(
            StreamKitHome.resolve(override: nil, environment: ["STREAMKIT_HOME": "", "HOME": "/h"])
                == "/h/.local/share/streamkit")
        #expect(StreamKitHome.library(in: "/h/s") == "/h/s/library")
    }

    @Test func aTakenPortFailsWithExitCode1NamingTheAddress() async throws {
        let root = try TestRun.makeTemporaryDirectory("serve-taken")
        let blocker = try ListeningSocket()
        let (code, output, error) = await run(["serve", "--root", root.path, "--port", "\(blocker.port)"])
        #expect(code == .failure)
        #expect(output.isEmpty)
        #expect(error.contains("cannot serve on 127.0.0.1:\(blocker.port)"), "stderr was: \(error)")
        #expect(error.contains("Address already in use"))
    }

    @Test func theProcessPrintsItsURLAndTokenAndFinishesTheResponseInFlightOnCtrlC() async throws {
        let root = try TestRun.makeTemporaryDirectory("serve-process")
        let item = root.appendingPathComponent("movie")
        try FileManager.default.createDirectory(at: item, withIntermediateDirectories: true)
        try "#EXTM3U\n".write(to: item.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let size = 4 << 20
        // A period of 256 bytes, repeated (byte by byte, 4 MiB would hold a pool thread in a debug build).
        let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var content = Data(capacity: size)
        for _ in 0..<(size / 256) { content.append(contentsOf: period) }
        try content.write(
            to: item.appendingPathComponent("big.ts"))

        let server = try await ServeProcess.start(arguments: ["--root", root.path, "--port", "0"])
        #expect(server.output.contains("Serving \(root.resolvingSymlinksInPath().path)\n"))
        #expect(server.token.count == 32)
        #expect(server.output.contains("Sign-in URL: http://127.0.0.1:\(server.port)/?token=\(server.token)\n"))

        // A slow reader keeps the big response in flight while the server is told to stop.
        let port = server.port
        let connection = try RawHTTPConnection(port: port, receiveBufferSize: 4096)
        try connection.send("GET /library/movie/big.ts HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        let first = try connection.readSome(1000)
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        server.process.signal(SIGINT)
        try await Task.sleep(for: .milliseconds(300))
        #expect(server.process.isRunning, "the server must wait for the response in flight")
        #expect(await LocalNetwork.waitUntilStoppedListening(port: port), "no new connections after Ctrl-C")

        let rest = try await runBlocking { connection.readToEnd() }
        let headEnd = (first + rest).firstRange(of: Array("\r\n\r\n".utf8))!.upperBound
        #expect((first + rest).count - headEnd == size, "the whole body arrives")
        let status = try await server.process.wait(timeout: .seconds(10))
        #expect(status == 0)
        #expect(server.process.standardOutput.hasSuffix("Stopped.\n"))
    }

    @Test func aSecondCtrlCStopsAtOnceWithExitCode130() async throws {
        let root = try TestRun.makeTemporaryDirectory("serve-forced")
        let item = root.appendingPathComponent("movie")
        try FileManager.default.createDirectory(at: item, withIntermediateDirectories: true)
        try Data(count: 32 << 20).write(to: item.appendingPathComponent("big.ts"))
        let server = try await ServeProcess.start(arguments: ["--root", root.path, "--port", "0"])
        let connection = try RawHTTPConnection(port: server.port, receiveBufferSize: 4096)
        try connection.send("GET /library/movie/big.ts HTTP/1.1\r\nHost: localhost:\(server.port)\r\n\r\n")
        _ = try connection.readSome(100)
        server.process.signal(SIGINT)
        #expect(await server.waitForOutput("Stopping:"))
        #expect(server.process.isRunning)
        server.process.signal(SIGINT)
        let status = try await server.process.wait(timeout: .seconds(5))
        #expect(status == 130)
        let received = try await runBlocking { connection.readToEnd() }
        #expect(received.count < 32 << 20, "the stalled response was cut off")
    }

    @Test func theDefaultLibraryIsCreatedUnderTheHomeDirectory() async throws {
        let home = try TestRun.makeTemporaryDirectory("serve-home")
        let server = try await ServeProcess.start(
            arguments: ["--port", "0"], environment: ["STREAMKIT_HOME": home.path])
        let library = home.appendingPathComponent("library").resolvingSymlinksInPath().path
        #expect(server.output.contains("Serving \(library)\n"))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: library, isDirectory: &isDirectory) && isDirectory.boolValue)
        let page = try await runBlocking { () -> RawHTTPResponse in
            let connection = try RawHTTPConnection(port: server.port)
            try connection.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n")
            return try connection.readResponse()
        }
        #expect(page.status == 200 && page.text.contains("The library is empty"))
        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
    }
}

extension ServeCommandTests {
    @Test func offLoopbackEveryRouteWantsTheTokenAndTheSignInURLIsPrintedOnce() async throws {
        let root = try TestRun.makeTemporaryDirectory("serve-lan")
        let server = try await ServeProcess.start(arguments: ["--root", root.path, "--host", "0.0.0.0", "--port", "0"])
        let (port, token) = (server.port, server.token)
        #expect(
            server.output.contains(
                "URL: http://127.0.0.1:\(port)/\nToken: \(token)\nSign-in URL: http://127.0.0.1:\(port)/?token=\(token)\n"
            ))
        func get(_ target: String, _ fields: String = "") async throws -> RawHTTPResponse {
            try await runBlocking {
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(fields)\r\n")
                return try connection.readResponse()
            }
        }
        #expect(try await get("/").status == 401)
        #expect(try await get("/api/tasks").status == 401)
        let signIn = try await get("/?token=\(token)")
        #expect(signIn.status == 303 && signIn.header("Location") == "/")
        let cookie = try #require(signIn.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        #expect(cookie == "streamkit-token-\(port)=\(token)")
        let page = try await get("/", "Cookie: \(cookie)\r\n")
        #expect(page.status == 200 && page.text.contains("The library is empty"))
        let wrong = try await get("/?token=\(token.first == "0" ? "1" : "0")\(token.dropFirst())")
        #expect(wrong.status == 401 && wrong.header("Set-Cookie") == nil)

        server.process.signal(SIGTERM)
        #expect(try await server.process.wait(timeout: .seconds(10)) == 0)
        // Printed at start only (the token line and the sign-in URL): no request is logged with it.
        #expect(server.process.standardOutput.components(separatedBy: token).count == 3)
        #expect(!server.process.standardError.contains(token))
        #expect(
            server.process.standardError.contains(
                "warning: listening on 0.0.0.0:\(port): reachable from other machines"))
    }
}

/// A socket listening on a free loopback port, to make that port taken.
private final class ListeningSocket {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 1) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw TestSupportError("cannot listen: \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
