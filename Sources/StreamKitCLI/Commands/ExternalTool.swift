import Foundation

/// Programs some commands call when they are installed (ffmpeg to remux, ffprobe to decode).
enum ExternalTool {
    /// The full path of `name` on `$PATH`, or `nil`.
    static func find(_ name: String, environment: [String: String]) -> String? {
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// What a run printed and how it ended.
    struct Outcome {
        var status: Int32
        var standardOutput: Data
        var standardError: String
    }

    /// Runs `executable` to its end, its output collected in temporary files (a pipe read only
    /// after the exit would stop a program that prints more than the pipe holds).
    ///
    /// - Throws: `description` of the failure when it cannot start.
    static func run(_ executable: String, _ arguments: [String]) async throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory
        let stem = "streamkit-\(URL(fileURLWithPath: executable).lastPathComponent)-\(UUID().uuidString.prefix(8))"
        let output = directory.appendingPathComponent(stem + ".out")
        let errors = directory.appendingPathComponent(stem + ".err")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        for file in [output, errors] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw ExternalToolError("cannot create \(file.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: ExternalToolError("cannot run \(executable): \(error)"))
            }
        }
        return Outcome(
            status: status, standardOutput: (try? Data(contentsOf: output)) ?? Data(),
            standardError: String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self))
    }
}

/// An external program that could not be run.
struct ExternalToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
