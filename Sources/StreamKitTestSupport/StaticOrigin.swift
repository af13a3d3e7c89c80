import Foundation

/// A fresh nginx serving a directory of its own: the origin most tests download from. Random
/// files can be made at start; more can be written as the test goes.
public struct StaticOrigin: Sendable {
    /// The directory served at `/`.
    public let root: URL
    /// The random files made at start, by name.
    public let files: [String: [UInt8]]
    /// The server.
    public let nginx: Nginx

    /// Makes the random files `files` (name → size; names may hold folders) under `root` (a new
    /// directory by default) and starts nginx on it.
    ///
    /// - Parameters:
    ///   - root: The directory to serve; a new one when `nil`.
    ///   - files: The random files to make.
    ///   - limitRate: Bytes a second each response may send; none when `nil`.
    ///   - honourRange: When false, nginx answers every request 200 with the whole file.
    /// - Throws: ``TestSupportError`` when nginx is missing or does not start.
    public static func start(
        root: URL? = nil, files: [String: Int] = [:], limitRate: Int? = nil, honourRange: Bool = true
    ) async throws -> StaticOrigin {
        let given = root
        // Making and writing megabytes is done on a thread of its own: on the cooperative pool it
        // held up every other test's tasks.
        let (root, contents) = try await runBlocking { () -> (URL, [String: [UInt8]]) in
            let root = try given ?? TestRun.makeTemporaryDirectory("origin")
            var contents: [String: [UInt8]] = [:]
            for (name, size) in files {
                let bytes = randomBytes(size)
                let url = root.appendingPathComponent(name)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(bytes).write(to: url)
                contents[name] = bytes
            }
            return (root, contents)
        }
        let nginx = try await Nginx.static(root: root, limitRatePerConnection: limitRate, honourRange: honourRange)
        return StaticOrigin(root: root, files: contents, nginx: nginx)
    }

    /// Stops nginx.
    public func stop() async { await nginx.stop() }

    /// The URL of `name` on this origin.
    public func url(_ name: String) -> String { nginx.url(name).absoluteString }

    /// Writes `bytes` as `name`, with a modification time `age` seconds in the past (nginx's ETag
    /// is made of the modification second and the size, so a rewrite within the same second would
    /// otherwise keep its ETag).
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8], age: TimeInterval = 100) throws -> URL {
        let file = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: file.path)
        return file
    }
}
