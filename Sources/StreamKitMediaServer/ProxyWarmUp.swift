import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitHTTPServer
import StreamKitMediaCache

/// Runs the caching proxy's whole path once, away from the user's cache, so that the first
/// request a player makes does not pay for it.
///
/// The first proxied request of a process took 4–6 ms more than later ones (measured with
/// `perf`): the Swift runtime instantiating generic metadata and looking up conformances on
/// first use, ICU's IDNA tables for URL hosts, SQLite compiling statements, libcurl's first
/// transfer. Here a throwaway origin (a static file server on a free loopback port) serves a
/// 64 KiB file, a throwaway proxy (these routes over a cache in a temporary directory) serves it,
/// and a client reads a range of it cold and again warm; then everything is stopped and removed.
/// Nothing of it touches the user's cache or leaves 127.0.0.1.
enum ProxyWarmUp {
    /// Runs the warm-up with `client` (the real cache's, so that its first transfer is behind
    /// it too) and logs a failure at debug level: a failure only means that the first real
    /// request pays the start-up cost.
    static func start(client: HTTPClient, logger: Logger) -> Task<Void, Never> {
        Task.detached(priority: .utility) {
            do {
                try await run(client: client)
            } catch {
                logger.debug("the proxy's warm-up failed: \(error)")
            }
        }
    }

    /// Runs the warm-up in a new folder inside `parent`, removed afterwards.
    ///
    /// - Throws: Whatever failed; ``ProxyWarmUpError`` when the bytes read through the proxy
    ///   are not the file's.
    static func run(client: HTTPClient, in parent: String = FileManager.default.temporaryDirectory.path) async throws {
        let directory = parent + "/streamkit-warm-up-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/origin", withIntermediateDirectories: true)
        let name = "warm-up.bin"
        let bytes = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/origin/" + name))
        var origin: HTTPServer?
        var cache: MediaCache?
        var proxy: HTTPServer?
        var failure: (any Error)?
        do {
            let files = try HTTPStaticFileResponder(root: directory + "/origin")
            var originRoutes = HTTPRouter()
            originRoutes.add(
                .get, "/*path",
                runsOnEventLoop: { request in files.respond(to: request, rawPath: String(request.path.dropFirst())) })
            let originServer = try HTTPServer.start(
                configuration: HTTPServerConfiguration(eventLoopCount: 1), router: originRoutes)
            origin = originServer
            let throwaway = try MediaCache(
                configuration: MediaCacheConfiguration(directory: directory + "/cache", byteLimit: 1 << 20),
                client: client)
            cache = throwaway
            let proxyServer = try HTTPServer.start(
                configuration: HTTPServerConfiguration(eventLoopCount: 1), router: ProxyRoutes.routes(cache: throwaway))
            proxy = proxyServer
            let target =
                String(proxyServer.baseURL.dropLast()) + ProxyRoutes.localPath(for: originServer.baseURL + name)
            // Cold (from the origin, through the data file), then warm (from the cache).
            for _ in 0..<2 {
                var request = HTTPClientRequest(url: target)
                request.range = .closed(first: 1_000, last: 40_999)
                let response = try await client.data(for: request)
                guard response.body == Array(bytes[1_000...40_999]) else {
                    throw ProxyWarmUpError(
                        detail: "HTTP \(response.head.status.rawValue), \(response.body.count) bytes")
                }
            }
        } catch {
            failure = error
        }
        await proxy?.shutdown(gracePeriod: .seconds(1))
        await cache?.shutdown()
        await origin?.shutdown(gracePeriod: .seconds(1))
        if let failure { throw failure }
    }
}

/// The warm-up read other bytes than the file's.
struct ProxyWarmUpError: Error, CustomStringConvertible {
    let detail: String
    var description: String { "the warm-up read the wrong bytes: \(detail)" }
}
