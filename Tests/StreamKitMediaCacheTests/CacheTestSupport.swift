import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaCache
import StreamKitTestSupport
import Testing

/// An nginx origin serving a directory the test fills.
typealias Origin = StaticOrigin

extension StaticOrigin {
    /// The ranges of the 206 responses for `name` in the access log, once it has settled.
    func fetchedRanges(_ name: String) async throws -> [(range: ByteRange, bytes: Int64, completed: Bool)] {
        ranges(name, in: try await nginx.settledAccessLog())
    }

    /// The ranges of the 206 responses for `name` logged so far.
    func fetchedRangesNow(_ name: String) -> [(range: ByteRange, bytes: Int64, completed: Bool)] {
        ranges(name, in: nginx.accessLog)
    }

    private func ranges(_ name: String, in log: [AccessLogEntry]) -> [(range: ByteRange, bytes: Int64, completed: Bool)]
    {
        log.filter { $0.uri.hasPrefix("/" + name) && $0.status == 206 }.compactMap { entry in
            guard let text = entry.range, let range = parseRange(text) else { return nil }
            return (range, entry.bytesSent, entry.completed)
        }
    }
}

/// `bytes=a-b` as a byte range; `bytes=a-` reaches to `Int64.max`.
func parseRange(_ text: String) -> ByteRange? {
    guard text.hasPrefix("bytes=") else { return nil }
    let parts = text.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let first = Int64(parts[0]) else { return nil }
    if parts[1].isEmpty { return ByteRange(first, Int64.max) }
    guard let last = Int64(parts[1]) else { return nil }
    return ByteRange(first, last + 1)
}

/// A directory in memory (/dev/shm, else a temporary directory) for a test's large files: the
/// hundreds of megabytes it writes then do not load the disk that every other test's file writes
/// wait on. The caller removes it.
func memoryDirectory(_ prefix: String) throws -> URL {
    guard FileManager.default.fileExists(atPath: "/dev/shm") else { return try TestRun.makeTemporaryDirectory(prefix) }
    let url = URL(fileURLWithPath: "/dev/shm/streamkit-tests-\(getpid())/\(prefix)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Whether `body` yields exactly `content[range]` (compared chunk by chunk, without hashing: the
/// 200 MB test must not keep the test process's few threads busy).
func bodyMatches(_ body: MediaCacheBody, _ content: [UInt8], _ range: ByteRange) async throws -> Bool {
    var offset = Int(range.lowerBound)
    var matches = true
    for try await chunk in body {
        let end = offset + chunk.count
        if matches {
            matches =
                end <= Int(range.upperBound)
                && chunk.withUnsafeBytes { chunkBytes in
                    content.withUnsafeBytes { contentBytes in
                        chunkBytes.count == 0
                            || memcmp(chunkBytes.baseAddress!, contentBytes.baseAddress! + offset, chunkBytes.count)
                                == 0
                    }
                }
        }
        offset = end
    }
    return matches && offset == Int(range.upperBound)
}

/// One HTTP client (one I/O thread) for every cache the tests make, as an application would
/// share one: a client per cache would add a thread per test running at once, and other suites
/// count the process's threads.
let sharedTestClient: HTTPClient = {
    do {
        return try HTTPClient(
            configuration: HTTPClientConfiguration(
                timeouts: HTTPClientTimeouts(connect: .seconds(15), idle: .seconds(30)),
                bodyBufferLimit: 1 << 20, receiveBufferSize: 256 << 10))
    } catch {
        fatalError("cannot make the tests' HTTP client: \(error)")
    }
}()

/// A cache in a new directory.
func makeCache(
    byteLimit: Int64 = 1 << 30, keyFunction: MediaCacheKeyFunction = .url, directory: URL? = nil,
    configure: (inout MediaCacheConfiguration) -> Void = { _ in }
) throws -> MediaCache {
    let directory = try directory ?? TestRun.makeTemporaryDirectory("cache")
    var configuration = MediaCacheConfiguration(
        directory: directory.path, byteLimit: byteLimit, keyFunction: keyFunction)
    configure(&configuration)
    return try MediaCache(configuration: configuration, client: sharedTestClient)
}

extension MediaCacheBody {
    /// Every byte.
    func collect() async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self { bytes += chunk }
        return bytes
    }
}

extension MediaCache {
    /// Reads `range` of `url` whole.
    func bytes(_ url: String, _ range: ByteRange? = nil) async throws -> (MediaCacheRead, [UInt8]) {
        let read = try await self.read(
            url, range: range.map { .closed(first: $0.lowerBound, last: $0.upperBound - 1) })
        return (read, try await read.body.collect())
    }
}

/// Collects every event until told to stop.
final class EventRecorder: Sendable {
    private let task: Task<[MediaCacheEvent], Never>

    init(_ cache: MediaCache) {
        let stream = cache.events()
        task = Task {
            var events: [MediaCacheEvent] = []
            for await event in stream { events.append(event) }
            return events
        }
    }

    /// The events, once the cache shut down (which ends the stream).
    var events: [MediaCacheEvent] { get async { await task.value } }
}

/// Expects `body` to throw a ``MediaCacheError`` of `kind`.
func expectError(
    _ kind: MediaCacheError.Kind, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected a \(kind) error", sourceLocation: sourceLocation)
    } catch let error as MediaCacheError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a \(kind) error, got \(error)", sourceLocation: sourceLocation)
    }
}
