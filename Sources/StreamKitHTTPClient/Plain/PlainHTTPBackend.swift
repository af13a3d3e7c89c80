#if canImport(Glibc)
import CStreamKitLinux
import Foundation
import Glibc
import Synchronization

/// The client's own HTTP/1.1 connections, for plain `http` GET requests whose body goes into a
/// file (``HTTPClientRequest/bodyIsWrittenToFile``): the body moves from the socket into the file
/// with `splice(2)`, through a pipe, without being copied into user space and back. libcurl reads
/// every byte into its buffer and hands it over 16 KB at a time; for a download that only
/// stores the bytes, that copy, its gathering and the system calls are much of the CPU time.
///
/// Everything else about such a request behaves as over libcurl: the same request head, the
/// same response checks (``HTTPClientTransferStateMachine``: range outcome, truncation, idle
/// timeout), the same body channel and errors. A request this path does not carry (a proxy, a
/// rate limit, a redirect, a chunked or unrequested content-coded body) goes to libcurl; a
/// response it cannot carry is dropped unread and the request sent again there (GET only).
///
/// Connections are kept alive per origin, at most
/// ``HTTPClientConfiguration/maximumConnectionsPerHost`` at once (a request waits for a free
/// one). Each transfer runs on a thread of its own with blocking waits (`poll`), so no I/O ever
/// runs on Swift's cooperative pool.
final class PlainHTTPBackend: TransferController, Sendable {
    private struct OriginState {
        var active = 0
        /// Kept connections, with when each was put back.
        var idle: [(connection: Int32, since: ContinuousClock.Instant)] = []
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        /// The origin answered with a redirect or a body framing this path does not read: its
        /// requests go to libcurl from then on (not two requests each).
        var handsToLibcurl = false
    }

    /// How long a kept connection may wait for its next request (libcurl's default maximum age).
    static let idleConnectionLifetime = Duration.seconds(118)

    private struct State {
        var origins: [PlainHTTPTarget.Origin: OriginState] = [:]
        var transfers: [Int: PlainHTTPTransfer] = [:]
        var closed = false
        /// Callers of ``shutdown()`` waiting for the last transfer to end.
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let configuration: HTTPClientConfiguration
    private let state = Mutex(State())
    private let statisticsState = Mutex(HTTPClientStatistics())
    private let liveTransfers = Atomic<Int>(0)

    /// The backend for `configuration`, or `nil` when the environment turns it off
    /// (`STREAMKIT_HTTP_SPLICE=0`).
    init?(configuration: HTTPClientConfiguration) {
        guard configuration.environment["STREAMKIT_HTTP_SPLICE"] != "0" else { return nil }
        self.configuration = configuration
    }

    /// Counters since the client started.
    var statistics: HTTPClientStatistics {
        var statistics = statisticsState.withLock { $0 }
        statistics.liveTransferObjects = liveTransfers.load(ordering: .relaxed)
        return statistics
    }

    /// The target for `request` when this backend carries it.
    func target(for request: HTTPClientRequest) -> PlainHTTPTarget? {
        guard request.bodyIsWrittenToFile, request.maximumReceiveRate == nil,
            configuration.globalReceiveRate == nil,
            configuration.proxy.resolve(for: request.url, environment: configuration.environment).proxy == nil,
            let target = PlainHTTPTarget(request: request, userAgent: configuration.userAgent)
        else { return nil }
        guard state.withLock({ $0.origins[target.origin]?.handsToLibcurl }) != true else { return nil }
        return target
    }

    /// Sends `request` to `target` and returns at the final head, or `nil` when the response is
    /// one for libcurl to fetch again (a redirect, a chunked or content-coded body).
    func execute(
        _ request: HTTPClientRequest, target: PlainHTTPTarget, id: Int, bodyBufferLimit: Int
    ) async throws -> HTTPClientResponse? {
        try await acquire(target.origin, id: id, request: request)
        guard
            let transfer = PlainHTTPTransfer(
                id: id, request: request, target: target, configuration: configuration,
                bodyBufferLimit: bodyBufferLimit,
                backend: self)
        else {
            // No descriptor for its wake-up (the process is out of them): libcurl carries it.
            release(target.origin, connection: nil)
            return nil
        }
        let registered = state.withLock { state in
            guard !state.closed else { return false }
            state.transfers[id] = transfer
            return true
        }
        guard registered else {
            release(target.origin, connection: nil)
            throw HTTPClientError(.cancelled, url: request.url, detail: "the HTTP client shut down")
        }
        statisticsState.withLock {
            $0.transfersStarted += 1
            $0.activeTransfers += 1
            $0.ownConnectionTransfers += 1
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.start(headContinuation: continuation)
            }
        } onCancel: {
            transfer.cancel(.cancelled)
        }
    }

    // MARK: TransferController

    func resumeTransfer(_ id: Int) {
        state.withLock { $0.transfers[id] }?.resume()
    }

    func cancelTransfer(_ id: Int, error: HTTPClientError) {
        state.withLock { $0.transfers[id] }?.cancel(error)
    }

    // MARK: Connections

    /// Waits until fewer than the per-host limit of connections to `origin` are in use, and
    /// takes one of them. A request waits at most its idle timeout, as one queued in libcurl does.
    private func acquire(_ origin: PlainHTTPTarget.Origin, id: Int, request: HTTPClientRequest) async throws {
        let url = request.url
        let idle = (request.timeouts ?? configuration.timeouts).idle
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, HTTPClientError>? = state.withLock { state in
                    if state.closed {
                        return .failure(HTTPClientError(.cancelled, url: url, detail: "the HTTP client shut down"))
                    }
                    if Task.isCancelled { return .failure(HTTPClientError(.cancelled, url: url, detail: "cancelled")) }
                    var entry = state.origins[origin, default: OriginState()]
                    defer { state.origins[origin] = entry }
                    if entry.active < max(1, configuration.maximumConnectionsPerHost) {
                        entry.active += 1
                        return .success(())
                    }
                    entry.waiters.append((id, continuation))
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                } else if let idle {
                    timer = Task { [weak self] in
                        guard (try? await Task.sleep(for: idle)) != nil else { return }
                        self?.dropWaiter(
                            id, of: origin,
                            failing: HTTPClientError(
                                .idleTimeout, url: url, detail: "no connection to the host came free in \(idle)"))
                    }
                }
            }
        } onCancel: {
            dropWaiter(id, of: origin, failing: HTTPClientError(.cancelled, url: url, detail: "cancelled"))
        }
    }

    /// Fails waiter `id` of `origin` with `error`, if it still waits.
    private func dropWaiter(_ id: Int, of origin: PlainHTTPTarget.Origin, failing error: HTTPClientError) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var entry = state.origins[origin], let index = entry.waiters.firstIndex(where: { $0.id == id })
            else { return nil }
            let waiter = entry.waiters.remove(at: index).continuation
            state.origins[origin] = entry
            return waiter
        }
        waiter?.resume(throwing: error)
    }

    /// Gives back a connection slot of `origin`, with the connection when it can carry another
    /// request (else it was closed).
    func release(_ origin: PlainHTTPTarget.Origin, connection: Int32?) {
        let (waiter, surplus) = state.withLock {
            state -> (CheckedContinuation<Void, any Error>?, Int32?) in
            var entry = state.origins[origin, default: OriginState()]
            defer { state.origins[origin] = entry }
            var surplus: Int32?
            if let connection {
                if state.closed || entry.idle.count >= max(1, configuration.maximumConnectionsPerHost) {
                    surplus = connection
                } else {
                    entry.idle.append((connection, .now))
                }
            }
            if !entry.waiters.isEmpty { return (entry.waiters.removeFirst().continuation, surplus) }
            entry.active -= 1
            return (nil, surplus)
        }
        if let surplus { close(surplus) }
        waiter?.resume()
    }

    /// An idle connection to `origin` the server has not closed, if there is one.
    func idleConnection(to origin: PlainHTTPTarget.Origin) -> Int32? {
        while let (connection, since) = state.withLock({ $0.origins[origin]?.idle.popLast() }) {
            // Readable while idle means closed by the server (or a stray byte): not reusable.
            var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            if since.duration(to: .now) < Self.idleConnectionLifetime, poll(&entry, 1, 0) == 0 { return connection }
            close(connection)
        }
        return nil
    }

    /// `origin` answered with what only libcurl reads: its later requests go there directly.
    func handsToLibcurl(_ origin: PlainHTTPTarget.Origin) {
        state.withLock { $0.origins[origin, default: OriginState()].handsToLibcurl = true }
    }

    /// A transfer opened a connection.
    func connectionOpened() {
        statisticsState.withLock { $0.connectionsOpened += 1 }
    }

    /// A transfer was paused because its reader lagged.
    func bodyPaused() {
        statisticsState.withLock { $0.bodyPauses += 1 }
    }

    func transferObjectCreated() { liveTransfers.add(1, ordering: .relaxed) }

    func transferObjectDestroyed() { liveTransfers.subtract(1, ordering: .relaxed) }

    /// Transfer `id` ended, having spliced `splicedBytes` into a file; one handed to libcurl
    /// counts as libcurl's transfer alone.
    func transferEnded(_ id: Int, splicedBytes: Int, handedToLibcurl: Bool) {
        statisticsState.withLock {
            $0.activeTransfers -= 1
            $0.bytesSpliced += Int64(splicedBytes)
            if handedToLibcurl {
                $0.transfersStarted -= 1
                $0.ownConnectionTransfers -= 1
            } else {
                $0.transfersFinished += 1
            }
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.transfers[id] = nil
            guard state.transfers.isEmpty else { return [] }
            defer { state.shutdownWaiters = [] }
            return state.shutdownWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Cancels every transfer, closes the idle connections, and waits until every transfer ended.
    func shutdown() async {
        requestShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.transfers.isEmpty { return true }
                state.shutdownWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Cancels every transfer and closes the idle connections, without waiting; requests made
    /// afterwards fail.
    func requestShutdown() {
        let (transfers, idle, waiters) = state.withLock { state in
            state.closed = true
            let transfers = Array(state.transfers.values)
            let idle = state.origins.values.flatMap { $0.idle.map(\.connection) }
            let waiters = state.origins.values.flatMap { $0.waiters.map(\.continuation) }
            for key in state.origins.keys {
                state.origins[key]?.idle = []
                state.origins[key]?.waiters = []
            }
            return (transfers, idle, waiters)
        }
        for transfer in transfers { transfer.cancel(HTTPClientError(.cancelled, detail: "the HTTP client shut down")) }
        for connection in idle { close(connection) }
        for waiter in waiters {
            waiter.resume(throwing: HTTPClientError(.cancelled, detail: "the HTTP client shut down"))
        }
    }
}
#endif
