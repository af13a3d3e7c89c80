import Foundation

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
}
