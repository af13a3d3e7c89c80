import Foundation
import StreamKitTestSupport

/// `streamkit serve` running as a child process, its URL and token read from its output.
struct ServeProcess {
    let process: ChildProcess
    let output: String
    let port: UInt16
    let token: String

    static func start(arguments: [String], environment: [String: String] = [:]) async throws -> ServeProcess {
        var environment = environment
        if environment["STREAMKIT_HOME"] == nil {
            environment["STREAMKIT_HOME"] = try TestRun.makeTemporaryDirectory("serve-home").path
        }
        let process = try ChildProcess(
            executable: try BuiltProducts.executable("streamkit"), arguments: ["serve"] + arguments,
            environment: environment, logName: "streamkit-serve")
        let deadline = ContinuousClock.now + .seconds(20)
        var text = ""
        while ContinuousClock.now < deadline && !text.contains("Press Ctrl-C") && process.isRunning {
            try await Task.sleep(for: .milliseconds(10))
            text = process.standardOutput
        }
        guard let urlLine = text.split(separator: "\n").first(where: { $0.hasPrefix("URL: ") }),
            let portText = urlLine.split(separator: ":").last?.dropLast(), let port = UInt16(portText),
            let tokenLine = text.split(separator: "\n").first(where: { $0.hasPrefix("Token: ") })
        else { throw TestSupportError("serve did not start: \(text)\n\(process.standardError)") }
        return ServeProcess(
            process: process, output: text, port: port, token: String(tokenLine.dropFirst("Token: ".count)))
    }
}

extension ServeProcess {
    /// Waits until the process has printed `text`.
    func waitForOutput(_ text: String, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if process.standardOutput.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
