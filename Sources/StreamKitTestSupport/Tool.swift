import Foundation
import Testing

/// An outside program a test needs: a real server, encoder or peer.
public struct Tool: Hashable, Sendable, CustomStringConvertible {
    /// The executable's name, looked up on `PATH` (plus the sbin directories, where nginx lives).
    public let name: String
    /// A file that must also exist, such as a dynamic module.
    public let requiredFile: String?
    /// The Debian package that provides it, for the skip message.
    public let package: String

    public init(_ name: String, package: String? = nil, requiredFile: String? = nil) {
        self.name = name
        self.package = package ?? name
        self.requiredFile = requiredFile
    }

    public static let nginx = Tool("nginx", package: "nginx-light")
    public static let nginxRTMP = Tool(
        "nginx", package: "libnginx-mod-rtmp", requiredFile: "/usr/lib/nginx/modules/ngx_rtmp_module.so")
    /// nginx's `stream` module, for TLS proxies (RTMPS).
    public static let nginxStream = Tool(
        "nginx", package: "libnginx-mod-stream", requiredFile: "/usr/lib/nginx/modules/ngx_stream_module.so")
    public static let ffmpeg = Tool("ffmpeg")
    public static let ffprobe = Tool("ffprobe", package: "ffmpeg")
    public static let openssl = Tool("openssl")
    public static let curl = Tool("curl")
    public static let rtmpdump = Tool("rtmpdump")
    public static let tmux = Tool("tmux")
    /// GNU time, for a process's exact peak resident memory (`-f %M`): it forks the process from
    /// its own small one, where a process spawned by the test runner carries the runner's peak in
    /// `ru_maxrss`, and sampling `/proc` misses the peak of a process that ends between samples.
    public static let gnuTime = Tool("time", package: "time", requiredFile: "/usr/bin/time")
    public static let chromium = Tool("chromium")
    /// The shells whose completion scripts `streamkit completions` writes (bash is always there).
    public static let zsh = Tool("zsh")
    public static let fish = Tool("fish")
    /// `man -l` renders the manual page; groff checks it for warnings.
    public static let man = Tool("man", package: "man-db")
    public static let groff = Tool("groff", package: "groff-base")
    /// Chromium driven through WebDriver (``Selenium``): Debian's driver and Python bindings.
    public static let selenium = Tool(
        "chromedriver", package: "chromium-driver python3-selenium",
        requiredFile: "/usr/lib/python3/dist-packages/selenium/__init__.py")
    /// GStreamer's command-line player; the HLS demuxers are in -bad and -good, H.264 in -libav.
    public static let gstLaunch = Tool(
        "gst-launch-1.0",
        package:
            "gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad "
            + "gstreamer1.0-libav")

    /// The executable's full path, or `nil` when it is not installed.
    public var path: String? {
        if let requiredFile, !FileManager.default.fileExists(atPath: requiredFile) { return nil }
        let searchPath =
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin:/usr/local/sbin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Whether the tool can be used on this machine.
    public var isAvailable: Bool { path != nil }

    /// The tool's path.
    ///
    /// - Throws: ``TestSupportError`` when it is missing; a test that gets this far without the
    ///   tool fails, which is what `STREAMKIT_REQUIRE_TOOLS=1` asks for.
    public func requirePath() throws -> String {
        guard let path else { throw TestSupportError("\(name) is not installed (Debian package \(package))") }
        return path
    }

    public var description: String { requiredFile == nil ? name : "\(name) (\(package))" }
}

/// Whether missing tools are failures (CI) or visible skips (a developer's laptop).
public enum ToolPolicy {
    /// True when `STREAMKIT_REQUIRE_TOOLS=1`: tests that need a missing tool run and fail.
    public static var toolsRequired: Bool { ProcessInfo.processInfo.environment["STREAMKIT_REQUIRE_TOOLS"] == "1" }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when every tool is installed, or always when tools are required
    /// (`STREAMKIT_REQUIRE_TOOLS=1`), so that in CI a missing tool is a failure, not a skip.
    public static func requires(_ tools: Tool..., sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        let missing = tools.filter { !$0.isAvailable }
        let comment = Comment(
            rawValue: "needs " + missing.map { "\($0.name) (apt-get install \($0.package))" }.joined(separator: ", "))
        return .enabled(if: ToolPolicy.toolsRequired || missing.isEmpty, comment, sourceLocation: sourceLocation)
    }
}

/// A failure in the test harness itself: a server that did not start, a fixture that did not build.
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
