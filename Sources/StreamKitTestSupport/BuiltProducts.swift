import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's own executables, built next to the test binary by `swift build --build-tests`.
public enum BuiltProducts {
    /// The directory holding the running test binary and the package's built products.
    public static var directory: URL {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        // The test binary is `Name.xctest` on Linux and inside `Name.xctest/Contents/MacOS/` on Darwin.
        var components = URL(fileURLWithPath: executable).pathComponents
        if let bundle = components.firstIndex(where: { $0.hasSuffix(".xctest") }) {
            components = Array(components[..<bundle])
        } else {
            components.removeLast()
        }
        return URL(fileURLWithPath: components.joined(separator: "/"))
    }

    /// The path of the built executable `name`.
    ///
    /// - Throws: ``TestSupportError`` when it has not been built.
    public static func executable(_ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError("\(path) is not built; run `swift build --build-tests` first")
        }
        return path
    }

    /// Copies an executable to `destination` (mode 0755) through a close-on-exec descriptor.
    /// `FileManager.copyItem` leaves its descriptor inheritable: a child another test spawns at
    /// that moment (nginx, ffmpeg) keeps the copy open for writing, and starting the copy then
    /// fails with "Text file busy" (seen in the suite).
    ///
    /// - Throws: ``TestSupportError`` when the file cannot be read or written.
    public static func copyExecutable(from source: String, to destination: String) throws {
        guard let bytes = FileManager.default.contents(atPath: source) else {
            throw TestSupportError("cannot read \(source)")
        }
        let descriptor = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw TestSupportError("cannot create \(destination): errno \(errno)") }
        defer { close(descriptor) }
        var written = 0
        try bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw TestSupportError("cannot write \(destination): errno \(errno)") }
                written += count
            }
        }
    }
}
