import Foundation

/// The outcome of running a program to completion.
public struct ToolOutput: Sendable {
    /// The exit status.
    public let status: Int32
    /// Everything written to standard output.
    public let standardOutput: String
    /// Everything written to standard error.
    public let standardError: String
}

extension Tool {
    /// Runs the tool to completion and returns its output.
    ///
    /// - Throws: ``TestSupportError`` when the tool is missing, does not finish within `timeout`,
    ///   or exits with a non-zero status (unless `allowFailure`).
    @discardableResult
    public func run(
        _ arguments: [String], timeout: Duration = .seconds(120), workingDirectory: URL? = nil,
        allowFailure: Bool = false
    ) async throws -> ToolOutput {
        let process = try ChildProcess(
            executable: try requirePath(), arguments: arguments, workingDirectory: workingDirectory, logName: name)
        let status: Int32
        do {
            status = try await process.wait(timeout: timeout)
        } catch {
            await process.stop(timeout: .seconds(1))
            throw error
        }
        let output = ToolOutput(
            status: status, standardOutput: process.standardOutput, standardError: process.standardError)
        try? FileManager.default.removeItem(at: process.standardOutputPath)
        try? FileManager.default.removeItem(at: process.standardErrorPath)
        if status != 0 && !allowFailure {
            throw TestSupportError(
                "\(name) \(arguments.joined(separator: " ")) exited with \(status):\n\(output.standardError.suffix(2_000))"
            )
        }
        return output
    }
}
