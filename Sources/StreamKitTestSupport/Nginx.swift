import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real nginx on 127.0.0.1 with ephemeral ports: a static origin, or an RTMP server (with
/// TLS proxies in front of it for RTMPS).
///
/// Runs in the foreground (`daemon off`) with one worker, its configuration and logs in a
/// directory of its own. Stop it with ``stop()``; it is also killed when the handle is dropped.
public final class Nginx: Sendable {
    /// The process (the master; its worker is in the same process group).
    public let process: ChildProcess
    /// The HTTP port.
    public let port: UInt16
    /// The RTMP port, for an RTMP server.
    public let rtmpPort: UInt16?
    /// The ports of the TLS proxies to the RTMP port, in the order of their certificates.
    public let tlsPorts: [UInt16]
    /// The directory holding `nginx.conf`, the logs, and for RTMP the HLS output.
    public let directory: URL

    private init(process: ChildProcess, port: UInt16, rtmpPort: UInt16?, tlsPorts: [UInt16], directory: URL) {
        self.process = process
        self.port = port
        self.rtmpPort = rtmpPort
        self.tlsPorts = tlsPorts
        self.directory = directory
    }

    /// `http://127.0.0.1:<port>/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    /// The URL of `path` (relative to the root) on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path))!
    }

    /// The RTMP URL of `stream` in `application`: `rtmp://127.0.0.1:<port>/<application>/<stream>`.
    public func rtmpURL(application: String, stream: String) -> String {
        "rtmp://127.0.0.1:\(rtmpPort ?? 0)/\(application)/\(stream)"
    }

    /// The RTMPS URL of `stream` in `application` through the TLS proxy `proxy` (an index into
    /// ``tlsPorts``): `rtmps://<host>:<port>/<application>/<stream>`.
    public func rtmpsURL(host: String = "localhost", proxy: Int = 0, application: String, stream: String) -> String {
        "rtmps://\(host):\(tlsPorts[proxy])/\(application)/\(stream)"
    }

    /// The access log file.
    public var accessLogPath: URL { directory.appendingPathComponent("access.log") }

    /// Every request logged so far, oldest first.
    public var accessLog: [AccessLogEntry] {
        let text = (try? String(contentsOf: accessLogPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap(AccessLogEntry.init(line:))
    }

    /// The error log, for diagnosing a failure.
    public var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// Waits until the error log holds `text` at least `count` times (nginx-rtmp logs each
    /// `connect`, `play` and `publish` there at `info` level). The timeout is generous: on a busy
    /// machine each step of an RTMP session has been seen to take seconds.
    ///
    /// - Throws: ``TestSupportError`` with the log's end when it does not within `timeout`.
    public func waitForErrorLog(_ text: String, count: Int = 1, timeout: Duration = .seconds(30)) async throws {
        let logged = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            errorLog.components(separatedBy: text).count - 1 >= count
        }
        guard logged else {
            throw TestSupportError("nginx did not log '\(text)' \(count) times:\n\(errorLog.suffix(2_000))")
        }
    }

    /// Stops nginx and waits until no process of it is left.
    public func stop() async { await process.stop() }

    /// Starts nginx serving the files under `root`.
    ///
    /// - Parameters:
    ///   - root: The directory served at `/`.
    ///   - limitRatePerConnection: Bytes a second each response may send (`limit_rate`); none when `nil`.
    ///   - honourRange: When false, nginx ignores `Range` and answers 200 with the whole file (`max_ranges 0`).
    ///   - unthrottledHeader: A request header (such as `X-Unthrottled`) whose presence lifts
    ///     `limitRatePerConnection` for that request, so a test can finish a throttled job quickly.
    ///   - requiredHeaders: Request headers (lowercase name, value) without which nginx answers
    ///     401, so that a test sees that a client sent them.
    ///   - port: The port to listen on, for an origin that comes back where it was; a free one
    ///     when `nil`.
    ///   - forbiddenPaths: Paths (`/key.bin`) nginx answers 403 for, as a key server that wants a
    ///     browser session does; the requests still reach the access log.
    /// - Throws: ``TestSupportError`` when nginx is missing or does not start.
    public static func `static`(
        root: URL, limitRatePerConnection: Int? = nil, honourRange: Bool = true, unthrottledHeader: String? = nil,
        requiredHeaders: [String: String] = [:], port: UInt16? = nil, forbiddenPaths: [String] = []
    ) async throws -> Nginx {
        var location = "root \(root.path);\n"
        for (name, value) in requiredHeaders.sorted(by: { $0.key < $1.key }) {
            let variable = "$http_" + name.lowercased().replacingOccurrences(of: "-", with: "_")
            location += "            if (\(variable) != \"\(value)\") { return 401; }\n"
        }
        if let limitRatePerConnection {
            if let unthrottledHeader {
                let variable = "$http_" + unthrottledHeader.lowercased().replacingOccurrences(of: "-", with: "_")
                location += "            set $limit_rate \(limitRatePerConnection);\n"
                location += "            if (\(variable)) { set $limit_rate 0; }\n"
            } else {
                location += "            limit_rate \(limitRatePerConnection);\n"
            }
        }
        if !honourRange { location += "            max_ranges 0;\n" }
        let locationBlock = location
        let forbiddenBlocks = forbiddenPaths.map { "location = \($0) { return 403; }" }.joined(separator: "\n")
        return try await launch(name: "nginx-static", tool: .nginx, modules: "", rtmp: nil, port: port) {
            directory, port in
            """
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        \(locationBlock)
                    }
                    \(forbiddenBlocks)
                }
            """
        }
    }

    /// Starts nginx with the RTMP module and the given applications.
    ///
    /// Applications with HLS output write it under `directory/hls/<application>/`, served over
    /// HTTP at `/hls/<application>/<stream>.m3u8`.
    ///
    /// - Parameters:
    ///   - rtmpPort: The RTMP port, for a server that comes back where it was; a free one when `nil`.
    ///   - tlsProxies: For RTMPS: one TLS proxy (nginx's `stream` module) to the RTMP port for each
    ///     certificate, on ``tlsPorts``.
    public static func rtmp(
        applications: [RTMPApplication], rtmpPort: UInt16? = nil, tlsProxies: [TLSCertificate] = []
    ) async throws -> Nginx {
        var modules = "load_module \(Tool.nginxRTMP.requiredFile!);"
        if !tlsProxies.isEmpty {
            _ = try Tool.nginxStream.requirePath()
            modules += "\nload_module \(Tool.nginxStream.requiredFile!);"
        }
        return try await launch(
            name: "nginx-rtmp", tool: .nginxRTMP, modules: modules, rtmp: applications, rtmpPort: rtmpPort,
            tlsProxies: tlsProxies
        ) { directory, port in
            """
                server {
                    listen 127.0.0.1:\(port);
                    location /hls/ {
                        alias \(directory.path)/hls/;
                        add_header Cache-Control no-cache;
                    }
                }
            """
        }
    }

    /// The number of access log entries once nginx has logged the requests it is ending (a
    /// cancelled transfer is logged when nginx notices the closed connection): the count once it
    /// has not changed for 400 ms, or after 10 s.
    public func settledAccessLogCount() async throws -> Int {
        var count = accessLog.count
        var stableSince = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(10)
        while stableSince.duration(to: .now) < .milliseconds(400), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            let now = accessLog.count
            if now != count {
                count = now
                stableSince = .now
            }
        }
        return count
    }

    /// The access log once it has settled (see ``settledAccessLogCount()``): nginx writes a line
    /// after the response's last byte went out, so a client that has just read that byte can look
    /// before the line is there.
    public func settledAccessLog() async throws -> [AccessLogEntry] {
        _ = try await settledAccessLogCount()
        return accessLog
    }

    // MARK: Private

    private static func launch(
        name: String, tool: Tool, modules: String, rtmp applications: [RTMPApplication]?, port chosen: UInt16? = nil,
        rtmpPort chosenRTMPPort: UInt16? = nil, tlsProxies: [TLSCertificate] = [],
        server: @escaping @Sendable (URL, UInt16) -> String
    ) async throws -> Nginx {
        let executable = try tool.requirePath()
        var lastError = ""
        for _ in 0..<5 {
            // The files and the spawn block; on a thread of their own, not the cooperative pool's
            // (held up there, they held up every other test's tasks).
            let (process, directory, port, rtmpPort, tlsPorts) = try await runBlocking {
                try prepareAndSpawn(
                    name: name, executable: executable, modules: modules, rtmp: applications, port: chosen,
                    rtmpPort: chosenRTMPPort, tlsProxies: tlsProxies, server: server)
            }
            var ready = await LocalNetwork.waitUntilListening(port: port, process: process)
            for other in [rtmpPort].compactMap({ $0 }) + tlsPorts where ready {
                ready = await LocalNetwork.waitUntilListening(port: other, process: process)
            }
            // Another test's server may hold a port that was free when this one picked it: then
            // something listens there, but not this nginx, which fails to bind and exits. nginx
            // writes its pid file only once it bound every port.
            if ready { ready = await hasWrittenPIDFile(process, in: directory) }
            if ready {
                return Nginx(process: process, port: port, rtmpPort: rtmpPort, tlsPorts: tlsPorts, directory: directory)
            }
            await process.stop()
            lastError = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            lastError += process.standardError
            if !lastError.contains("Address already in use") { break }
        }
        throw TestSupportError("nginx did not start:\n\(lastError.suffix(2_000))")
    }

    /// Waits until nginx wrote its own pid into its pid file (it does once its ports are bound),
    /// or exits, or 10 s pass.
    private static func hasWrittenPIDFile(_ process: ChildProcess, in directory: URL) async -> Bool {
        let path = directory.appendingPathComponent("nginx.pid").path
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) == process.pid { return true }
            if !process.isRunning { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// Makes the server's folder and configuration on free ports and starts nginx on them.
    private static func prepareAndSpawn(
        name: String, executable: String, modules: String, rtmp applications: [RTMPApplication]?, port chosen: UInt16?,
        rtmpPort chosenRTMPPort: UInt16?, tlsProxies: [TLSCertificate], server: @Sendable (URL, UInt16) -> String
    ) throws -> (ChildProcess, URL, UInt16, UInt16?, [UInt16]) {
        let directory = try TestRun.makeTemporaryDirectory(name)
        let port = try chosen ?? LocalNetwork.freePort()
        let rtmpPort = applications == nil ? nil : try chosenRTMPPort ?? LocalNetwork.freePort()
        for sub in ["temp", "hls"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        var rtmpBlock = ""
        if let applications, let rtmpPort {
            rtmpBlock = """
                rtmp {
                    server {
                        listen 127.0.0.1:\(rtmpPort);
                        chunk_size 4096;
                \(applications.map { $0.configuration(hlsRoot: directory.appendingPathComponent("hls")) }.joined(separator: "\n"))
                    }
                }
                """
        }
        let tlsPorts = try tlsProxies.map { _ in try LocalNetwork.freePort() }
        var streamBlock = ""
        if let rtmpPort, !tlsProxies.isEmpty {
            let servers = zip(tlsProxies, tlsPorts).map { proxy, port in
                """
                    server {
                        listen 127.0.0.1:\(port) ssl;
                        ssl_certificate \(proxy.certificate.path);
                        ssl_certificate_key \(proxy.key.path);
                        proxy_pass 127.0.0.1:\(rtmpPort);
                    }
                """
            }
            streamBlock = "stream {\n\(servers.joined(separator: "\n"))\n}"
        }
        let configuration = """
            \(modules)
            \(geteuid() == 0 ? "user root;" : "")
            daemon off;
            worker_processes 1;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log info;
            events { worker_connections 2048; }
            \(rtmpBlock)
            \(streamBlock)
            http {
                types {
                    application/vnd.apple.mpegurl m3u8;
                    video/mp2t ts;
                    video/mp4 mp4 m4s;
                    audio/mp4 m4a;
                    audio/aac aac;
                    audio/mpeg mp3;
                    text/vtt vtt;
                    video/x-flv flv;
                    text/html html;
                }
                default_type application/octet-stream;
                log_format streamkit '$request_method $request_uri $status $body_bytes_sent "$http_range" "$request_completion" $msec $request_time';
                access_log \(directory.path)/access.log streamkit;
                client_body_temp_path \(directory.path)/temp/body;
                proxy_temp_path \(directory.path)/temp/proxy;
                fastcgi_temp_path \(directory.path)/temp/fastcgi;
                uwsgi_temp_path \(directory.path)/temp/uwsgi;
                scgi_temp_path \(directory.path)/temp/scgi;
                sendfile on;
                tcp_nopush on;
                keepalive_timeout 65;
                keepalive_requests 100000;
            \(server(directory, port))
            }
            """
        let configurationPath = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: configurationPath, atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable: executable,
            arguments: [
                "-p", directory.path, "-c", configurationPath.path, "-e",
                directory.appendingPathComponent("error.log").path,
            ],
            logName: name)
        return (process, directory, port, rtmpPort, tlsPorts)
    }
}

/// An application block of nginx-rtmp.
public struct RTMPApplication: Sendable {
    /// The application name, the first path segment of the RTMP URL.
    public var name: String
    /// Whether the application relays live streams from publishers to players.
    public var live: Bool
    /// Whether nginx repackages each stream as sliding-window HLS.
    public var hls: Bool
    /// The HLS fragment length in seconds.
    public var hlsFragmentSeconds: Int
    /// The HLS playlist length in seconds.
    public var hlsPlaylistSeconds: Int
    /// Whether nginx deletes fragments that left the playlist (`hls_cleanup`); off keeps them all
    /// for a test to compare with.
    public var hlsCleanup: Bool

    public init(
        name: String, live: Bool = true, hls: Bool = false, hlsFragmentSeconds: Int = 2, hlsPlaylistSeconds: Int = 10,
        hlsCleanup: Bool = true
    ) {
        self.name = name
        self.live = live
        self.hls = hls
        self.hlsFragmentSeconds = hlsFragmentSeconds
        self.hlsPlaylistSeconds = hlsPlaylistSeconds
        self.hlsCleanup = hlsCleanup
    }

    func configuration(hlsRoot: URL) -> String {
        var lines = ["application \(name) {", "    live \(live ? "on" : "off");", "    record off;"]
        if hls {
            lines += [
                "    hls on;", "    hls_path \(hlsRoot.path)/\(name);", "    hls_fragment \(hlsFragmentSeconds)s;",
                "    hls_playlist_length \(hlsPlaylistSeconds)s;",
                "    hls_cleanup \(hlsCleanup ? "on" : "off");",
            ]
        }
        lines.append("}")
        return lines.map { "        " + $0 }.joined(separator: "\n")
    }
}

/// One line of the test nginx's access log.
public struct AccessLogEntry: Sendable, Equatable {
    /// GET, HEAD, ...
    public let method: String
    /// The request URI with its query.
    public let uri: String
    /// The response status.
    public let status: Int
    /// The body bytes sent.
    public let bytesSent: Int64
    /// The request's Range header, if any.
    public let range: String?
    /// Whether the whole response was sent (`$request_completion` was `OK`).
    public let completed: Bool
    /// When nginx read the request's first bytes, in seconds since 1970 (`$msec` less
    /// `$request_time`, to the millisecond): what tells a request a killed client had in flight,
    /// logged only once nginx noticed, from the next client's.
    public let started: Double?

    init?(line: Substring) {
        // GET /a.ts 206 1000 "bytes=0-999" "OK" 1764486000.123 0.250
        let quoted = line.split(separator: "\"", omittingEmptySubsequences: false)
        guard quoted.count >= 5 else { return nil }
        let head = quoted[0].split(separator: " ")
        guard head.count >= 4, let status = Int(head[2]), let bytes = Int64(head[3]) else { return nil }
        method = String(head[0])
        uri = String(head[1])
        self.status = status
        bytesSent = bytes
        range = quoted[1] == "-" || quoted[1].isEmpty ? nil : String(quoted[1])
        completed = quoted[3] == "OK"
        let times = quoted.count > 4 ? quoted[4].split(separator: " ") : []
        if times.count >= 2, let end = Double(times[0]), let duration = Double(times[1]) {
            started = end - duration
        } else {
            started = nil
        }
    }
}
