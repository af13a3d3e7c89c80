#if canImport(CStreamKitCurl)
import CStreamKitCurl
import StreamKitCore
import Foundation
import Synchronization

/// The I/O edge of ``HTTPClient``: one libcurl multi handle driven by one thread, for every
/// transfer of the client. Connections are kept alive and shared between transfers through the
/// multi handle's connection cache, limited per host and in total.
///
/// The thread loops over `curl_multi_perform` and `curl_multi_poll`. Other threads talk to it
/// only by posting commands to a locked inbox and calling `curl_multi_wakeup`, which libcurl
/// allows from any thread. `curl_multi_poll` rather than socket callbacks and epoll: for the
/// hundreds of transfers a client runs, polling that many sockets costs microseconds, and
/// libcurl then keeps its own socket and timer bookkeeping, which an epoll edge would mirror.
///
/// `@unchecked Sendable`: `multi`, `transfers`, `touched`, `ratePaused` and `bucket` are used
/// only on the I/O thread (in the loop and in libcurl's callbacks, which run inside
/// `curl_multi_perform` or `curl_easy_pause` on that thread); `inbox` and `statistics` are locked.
final class CurlMultiLoop: HTTPClientBackend, TransferController, @unchecked Sendable {
    private enum Command {
        case start(CurlTransfer)
        case resume(Int)
        case cancel(Int, HTTPClientError)
        case shutdown
    }

    private struct Inbox {
        var commands: [Command] = []
        var closed = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        var stopped = false
    }

    private let multi: UnsafeMutableRawPointer
    private let configuration: HTTPClientConfiguration
    private let inbox = Mutex(Inbox())
    private let statisticsState = Mutex(HTTPClientStatistics())
    private let logger: Logger
    /// Transfer objects alive (each owns an easy handle until it ends), for leak checks.
    let liveTransfers = Atomic<Int>(0)

    // I/O thread only.
    private var transfers: [Int: CurlTransfer] = [:]
    private var touched: [CurlTransfer] = []
    private var ratePaused: [CurlTransfer] = []
    private var bucket: TokenBucket?
    private var nextIdleScan = ContinuousClock.now

    /// Creates the multi handle and starts the I/O thread.
    init(configuration: HTTPClientConfiguration) throws {
        guard CurlGlobal.initialized, let multi = curl_multi_init() else {
            throw HTTPClientError(.transportFailure, detail: "curl_multi_init failed")
        }
        self.multi = multi
        self.configuration = configuration
        logger = configuration.logger
        _ = sk_curl_multi_setopt_long(
            multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, configuration.maximumConnectionsPerHost))
        _ = sk_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(1, configuration.maximumConnections))
        // The cache of idle connections, kept for reuse.
        _ = sk_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(4, configuration.maximumConnections))
        _ = sk_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        if let rate = configuration.globalReceiveRate, rate > 0 { bucket = TokenBucket(rate: rate, now: .now) }
        let thread = Thread { [self] in run() }
        thread.name = "sk-http-io"  // Linux keeps 15 characters
        thread.start()
    }

    deinit { curl_multi_cleanup(multi) }

    /// Counters since the client started.
    var statistics: HTTPClientStatistics {
        var statistics = statisticsState.withLock { $0 }
        statistics.liveTransferObjects = liveTransfers.load(ordering: .relaxed)
        return statistics
    }

    // MARK: Commands from any thread

    func execute(_ request: HTTPClientRequest, id: Int, bodyBufferLimit: Int) async throws -> HTTPClientResponse {
        let transfer = try CurlTransfer(
            id: id, request: request, configuration: configuration, bodyBufferLimit: bodyBufferLimit, loop: self)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<HTTPClientResponse, any Error>) in
                transfer.headContinuation = continuation
                if !start(transfer) {
                    transfer.headContinuation = nil
                    continuation.resume(
                        throwing: HTTPClientError(.cancelled, url: request.url, detail: "the HTTP client shut down"))
                }
            }
        } onCancel: {
            transfer.cancelRequested.store(true, ordering: .releasing)
            cancelTransfer(id, error: .cancelled)
        }
    }

    /// Hands `transfer` to the I/O thread; false when the loop has shut down.
    func start(_ transfer: CurlTransfer) -> Bool { post(.start(transfer)) }

    func resumeTransfer(_ id: Int) { _ = post(.resume(id)) }

    func cancelTransfer(_ id: Int, error: HTTPClientError) { _ = post(.cancel(id, error)) }

    /// Asks the loop to cancel everything and stop, without waiting.
    func requestShutdown() { _ = post(.shutdown) }

    /// Cancels every transfer, stops the thread and waits until it stopped.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let stopped = inbox.withLock { inbox in
                if inbox.stopped { return true }
                inbox.shutdownWaiters.append(continuation)
                if !inbox.closed { inbox.commands.append(.shutdown) }
                curl_multi_wakeup(multi)
                return false
            }
            if stopped { continuation.resume() }
        }
    }

    private func post(_ command: Command) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            // Under the lock, so that no wakeup can reach a multi handle being cleaned up.
            curl_multi_wakeup(multi)
            return true
        }
    }

    // MARK: The I/O thread

    private func run() {
        var running: Int32 = 0
        while true {
            let commands = inbox.withLock { inbox in
                defer { inbox.commands.removeAll(keepingCapacity: true) }
                return inbox.commands
            }
            for command in commands {
                if case .shutdown = command {
                    stop()
                    return
                }
                handle(command)
            }
            curl_multi_perform(multi, &running)
            readCompletions()
            flushTouched()
            let now = ContinuousClock.now
            var timeout = Duration.seconds(1)
            if let wait = resumeRatePaused(now: now) { timeout = min(timeout, wait) }
            if let wait = checkIdleDeadlines(now: now) { timeout = min(timeout, wait) }
            flushTouched()  // resuming paused transfers may have delivered bytes
            curl_multi_poll(multi, nil, 0, Int32(clamping: max(0, timeout.wholeMilliseconds)), nil)
        }
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer):
            if transfer.cancelRequested.load(ordering: .acquiring) {
                end(transfer, transfer.machine.cancel(.cancelled), inMulti: false)
                return
            }
            transfers[transfer.id] = transfer
            transfer.machine.resumed(now: .now)
            let code = curl_multi_add_handle(multi, transfer.easy)
            guard code == CURLM_OK else {
                transfers[transfer.id] = nil
                let error = HTTPClientError(
                    .transportFailure, url: transfer.url,
                    detail: "curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))")
                end(transfer, transfer.machine.cancel(error), inMulti: false)
                return
            }
            statisticsState.withLock {
                $0.transfersStarted += 1
                $0.activeTransfers += 1
            }
        case .resume(let id):
            guard let transfer = transfers[id] else { return }
            transfer.bodyPaused = false
            unpause(transfer)
        case .cancel(let id, let error):
            guard let transfer = transfers[id] else { return }
            end(transfer, transfer.machine.cancel(error), inMulti: true)
        case .shutdown:
            break
        }
    }

    private func stop() {
        for transfer in Array(transfers.values) {
            end(
                transfer, transfer.machine.cancel(HTTPClientError(.cancelled, detail: "the HTTP client shut down")),
                inMulti: true)
        }
        let (late, waiters) = inbox.withLock { inbox in
            inbox.closed = true
            inbox.stopped = true
            defer {
                inbox.commands = []
                inbox.shutdownWaiters = []
            }
            return (inbox.commands, inbox.shutdownWaiters)
        }
        for case .start(let transfer) in late {
            end(
                transfer, transfer.machine.cancel(HTTPClientError(.cancelled, detail: "the HTTP client shut down")),
                inMulti: false)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var pointer: UnsafeMutableRawPointer?
            guard sk_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else {
                continue
            }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(pointer).takeUnretainedValue()
            var failure: HTTPClientError?
            if code == CURLE_COULDNT_CONNECT, let refusal = transfer.refusal {
                failure = .destinationRefused(url: transfer.effectiveURL, address: refusal.address, rule: refusal.rule)
            } else if code != CURLE_OK {
                let message = transfer.errorMessage
                failure = CurlFailure.error(
                    for: .init(
                        code: Int(code.rawValue), message: message.isEmpty ? CurlFailure.describe(code) : message,
                        osErrno: transfer.info(CURLINFO_OS_ERRNO),
                        redirectURL: transfer.stringInfo(CURLINFO_REDIRECT_URL),
                        connected: transfer.offsetInfo(CURLINFO_CONNECT_TIME_T) > 0, url: transfer.effectiveURL,
                        headDelivered: transfer.machine.headDelivered))
            }
            let action = transfer.machine.completed(failure: failure, url: { transfer.effectiveURL })
            end(transfer, action, inMulti: true)
        }
    }

    /// Removes a transfer from the multi, frees its handle and reports its end.
    private func end(_ transfer: CurlTransfer, _ action: HTTPClientTransferStateMachine.EndAction, inMulti: Bool) {
        if inMulti {
            let connects = transfer.info(CURLINFO_NUM_CONNECTS)
            curl_multi_remove_handle(multi, transfer.easy)
            transfers[transfer.id] = nil
            statisticsState.withLock {
                $0.connectionsOpened += connects
                $0.transfersFinished += 1
                $0.activeTransfers -= 1
            }
        }
        if transfer.ratePaused { ratePaused.removeAll { $0 === transfer } }
        // Gathered bytes reach the file before the end is reported.
        let writeFailure = writeStaged(transfer)?.with(url: transfer.url)
        transfer.release()
        transfer.carryOut(action, writeFailure: writeFailure)
        // No callback can write for this transfer any more.
        transfer.channel.releaseDirectWrite()
    }

    private func flushTouched() {
        guard !touched.isEmpty else { return }
        let batch = touched
        touched.removeAll(keepingCapacity: true)
        for transfer in batch {
            transfer.touched = false
            if let failure = writeStaged(transfer) {
                // The transfer ends with it (the next callback aborts); its reader hears at the end.
                transfer.machine.abort(failure.with(url: transfer.url))
            }
            transfer.channel.flush(now: .now)
        }
    }

    /// Writes a transfer's gathered direct-write bytes; the error when that failed.
    private func writeStaged(_ transfer: CurlTransfer) -> HTTPClientError? {
        guard var staging = transfer.staging else { return nil }
        defer { transfer.staging = staging }
        do {
            transfer.channel.wroteDirectly(try staging.write())
            return nil
        } catch let error as HTTPClientError {
            return error
        } catch {
            return HTTPClientError(.fileWriteFailed, detail: "\(error)")
        }
    }

    private func unpause(_ transfer: CurlTransfer) {
        guard !transfer.bodyPaused, !transfer.ratePaused, transfers[transfer.id] != nil else { return }
        transfer.machine.resumed(now: .now)
        // May call the write callback at once with the bytes held while paused.
        curl_easy_pause(transfer.easy, CURLPAUSE_CONT)
    }

    /// Unpauses the transfers waiting for a rate limit (the client's or their own) whose buckets
    /// have tokens again. - Returns: How long until the next one may go, when some still wait.
    private func resumeRatePaused(now: ContinuousClock.Instant) -> Duration? {
        guard !ratePaused.isEmpty else { return nil }
        let waiting = ratePaused
        ratePaused.removeAll(keepingCapacity: true)
        var ready: [CurlTransfer] = []
        for transfer in waiting {
            if rateDelay(for: transfer, now: now) == .zero {
                transfer.ratePaused = false
                ready.append(transfer)
            } else {
                ratePaused.append(transfer)
            }
        }
        // Unpausing may call the write callback, which may pause the transfer again.
        for transfer in ready { unpause(transfer) }
        let later = ContinuousClock.now
        return ratePaused.map { rateDelay(for: $0, now: later) }.min()
    }

    /// How long until both the client's and the transfer's buckets have tokens.
    private func rateDelay(for transfer: CurlTransfer, now: ContinuousClock.Instant) -> Duration {
        max(
            bucket?.delayUntilAvailable(now: now) ?? .zero, transfer.bucket?.delayUntilAvailable(now: now) ?? .zero)
    }

    /// Times out transfers idle past their deadline. - Returns: How long until the next deadline.
    private func checkIdleDeadlines(now: ContinuousClock.Instant) -> Duration? {
        guard !transfers.isEmpty else { return nil }
        var nearest: ContinuousClock.Instant?
        for transfer in Array(transfers.values) {
            if let error = transfer.machine.idleTimeoutError(now: now) {
                end(transfer, transfer.machine.cancel(error), inMulti: true)
            } else if let deadline = transfer.machine.idleDeadline {
                nearest = nearest.map { min($0, deadline) } ?? deadline
            }
        }
        return nearest.map { now.duration(to: $0) }
    }

    // MARK: libcurl callbacks (I/O thread, inside curl_multi_perform or curl_easy_pause)

    /// The write callback: returns the bytes taken, `CURL_WRITEFUNC_PAUSE`, or 0 to abort.
    func receiveBody(_ transfer: CurlTransfer, _ bytes: UnsafeRawBufferPointer) -> Int {
        let now = ContinuousClock.now
        switch transfer.machine.bodyWillArrive(now: now, url: { transfer.effectiveURL }) {
        case .abort:
            return 0
        case .deliverHeadThenAccept(let head):
            transfer.deliverHead(head)
        case .accept:
            break
        }
        if bytes.isEmpty { return 0 }
        if !(bucket?.isAvailable(now: now) ?? true) || !(transfer.bucket?.isAvailable(now: now) ?? true) {
            transfer.ratePaused = true
            ratePaused.append(transfer)
            transfer.machine.paused(now: now)
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        switch transfer.channel.receive(bytes) {
        case .writeDirectly(let descriptor, let offset):
            // Gathered into one `pwrite` per loop iteration (libcurl hands over 16 KB at a time):
            // a copy in a buffer that stays in the cache costs less than the system calls it saves.
            do {
                var staging = transfer.staging ?? DirectWriteStaging()
                defer { transfer.staging = staging }
                if !staging.canAppend(bytes, descriptor: descriptor, offset: offset) {
                    transfer.channel.wroteDirectly(try staging.write())
                }
                if staging.canAppend(bytes, descriptor: descriptor, offset: offset) {
                    staging.append(bytes, descriptor: descriptor, offset: offset)
                } else {
                    try FileOutput.write(bytes, to: descriptor, at: offset)
                    transfer.channel.wroteDirectly(bytes.count)
                }
            } catch let error as HTTPClientError {
                transfer.machine.abort(error.with(url: transfer.url))
                return 0
            } catch {
                return 0
            }
            fallthrough
        case .accepted:
            transfer.machine.bodyAccepted(bytes.count, now: now)
            bucket?.take(bytes.count, now: now)
            transfer.bucket?.take(bytes.count, now: now)
            if !transfer.touched {
                transfer.touched = true
                touched.append(transfer)
            }
            return bytes.count
        case .pause:
            transfer.bodyPaused = true
            transfer.machine.paused(now: now)
            statisticsState.withLock { $0.bodyPauses += 1 }
            return Int(CURL_WRITEFUNC_PAUSE)
        case .abort:
            return 0
        }
    }

    /// The header callback: returns the bytes taken, or 0 to abort.
    func receiveHeader(_ transfer: CurlTransfer, _ bytes: UnsafeRawBufferPointer) -> Int {
        switch transfer.machine.headerLine(bytes, now: .now, url: { transfer.effectiveURL }) {
        case .none:
            return bytes.count
        case .deliverHead(let head):
            transfer.deliverHead(head)
            return bytes.count
        case .abort:
            return 0
        }
    }
}

#endif
