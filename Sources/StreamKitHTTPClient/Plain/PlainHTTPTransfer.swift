#if canImport(Glibc)
import StreamKitHTTP
import CStreamKitLinux
import StreamKitCore
import Foundation
import Glibc
import Synchronization

/// One request over the client's own connection (``PlainHTTPBackend``), run by a thread of its
/// own: connect (or reuse), send the head, read the response head line by line into the same
/// ``HTTPClientTransferStateMachine`` libcurl's transfers use, then the body into the same
/// ``ResponseBodyChannel``: by `recv` into chunks for a reader, or, once the reader handed over a
/// file, by `splice` from the socket through a pipe into the file.
///
/// The body is held after the head until the reader says how it reads it
/// (``ResponseBodyChannel/holdUntilAsked()``), so a download to a file splices from the first
/// byte the head left over.
///
/// What to do with the response is decided by ``PlainHTTPResponsePlan``; the thread carries it
/// out: connecting (`+Connect`), the head (`+Head`), the body (`+Body`, `+Splice`) and the waits
/// (`+Waiting`).
///
/// `@unchecked Sendable`: the state machine, the connection, the pipe and the head continuation
/// are touched only by the transfer's thread once ``start(headContinuation:)`` ran (and by the
/// creating task before); other threads only set `control` (locked) and write the wake-up
/// `eventfd`.
final class PlainHTTPTransfer: ResponseDelivery, @unchecked Sendable {
    struct Control {
        var cancellation: HTTPClientError?
    }

    /// Why an exchange did not reach a response this transfer carries.
    enum Detour: Error {
        /// A reused connection the server had closed: try a fresh one (nothing was received).
        case staleConnection
        /// A response for libcurl to fetch again (a redirect, a body framing or coding this
        /// transfer does not read).
        case handToLibcurl
    }

    let id: Int
    let request: HTTPClientRequest
    let target: PlainHTTPTarget
    let backend: PlainHTTPBackend
    let channel: ResponseBodyChannel
    let timeouts: HTTPClientTimeouts
    let totalDeadline: ContinuousClock.Instant?
    let receiveSize: Int
    let control = Mutex(Control())
    /// Written by other threads to wake the transfer's `poll` (resume, cancel).
    let wake: Int32

    // The transfer's thread only.
    var machine: HTTPClientTransferStateMachine
    var headContinuation: CheckedContinuation<HTTPClientResponse?, any Error>?
    var connection: Int32 = -1
    var pipe: (read: Int32, write: Int32, capacity: Int)?
    var spliceRefused = false
    var splicedTotal = 0
    var buffer: UnsafeMutableRawBufferPointer

    /// A transfer, or `nil` when no descriptor is left for its wake-up.
    init?(
        id: Int, request: HTTPClientRequest, target: PlainHTTPTarget, configuration: HTTPClientConfiguration,
        bodyBufferLimit: Int, backend: PlainHTTPBackend
    ) {
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else { return nil }
        self.id = id
        self.request = request
        self.target = target
        self.backend = backend
        let timeouts = request.timeouts ?? configuration.timeouts
        self.timeouts = timeouts
        totalDeadline = timeouts.total.map { .now + $0 }
        receiveSize = min(max(configuration.receiveBufferSize, 16 << 10), 512 << 10)
        channel = ResponseBodyChannel(
            highWater: bodyBufferLimit, transferID: id, controller: backend, supportsDirectWrite: true)
        machine = HTTPClientTransferStateMachine(
            expectation: .init(
                url: request.url, range: request.range, ifRange: request.ifRange, expectsBody: true,
                idleTimeout: timeouts.idle),
            now: .now)
        buffer = TransferBufferPool.shared.take(byteCount: receiveSize)
        backend.transferObjectCreated()
    }

    deinit {
        TransferBufferPool.shared.give(buffer)
        close(wake)
        backend.transferObjectDestroyed()
    }

    /// Starts the transfer's thread; `headContinuation` gets the response at its head, `nil`
    /// when libcurl is to fetch it again, or the failure.
    func start(headContinuation: CheckedContinuation<HTTPClientResponse?, any Error>) {
        self.headContinuation = headContinuation
        let thread = Thread { [self] in run() }
        thread.name = "sk-http-plain"
        thread.start()
    }

    /// The reader took a full buffer or asked for the body: wake the thread.
    func resume() { signal() }

    /// Stops the transfer with `error` (the reader's body ends with it).
    func cancel(_ error: HTTPClientError) {
        control.withLock { control in
            if control.cancellation == nil { control.cancellation = error }
        }
        signal()
    }

    private func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    // MARK: The transfer's thread

    private func run() {
        var reusable = false
        var outcome: HTTPClientTransferStateMachine.EndAction?
        do {
            let start = try exchange()
            reusable = try readBody(startingWith: start.leftover, length: start.length) && start.afterwards == .keep
            outcome = machine.completed(failure: nil, url: { self.request.url })
        } catch Detour.handToLibcurl {
            backend.handsToLibcurl(target.origin)
            outcome = nil
        } catch {
            let failure = error as? HTTPClientError ?? HTTPClientError(.transportFailure, detail: "\(error)")
            switch failure.kind {
            case .cancelled, .idleTimeout, .totalTimeout:
                outcome = machine.cancel(failure.with(url: request.url))
            default:
                outcome = machine.completed(failure: failure.with(url: request.url), url: { self.request.url })
            }
        }
        // Everything this transfer holds goes back before its reader hears of the end, as over
        // libcurl: the next request finds the kept connection, and the counters are final.
        if let pipe {
            close(pipe.read)
            close(pipe.write)
        }
        channel.releaseDirectWrite()
        var kept: Int32?
        if connection >= 0 {
            if reusable { kept = connection } else { close(connection) }
            connection = -1
        }
        backend.release(target.origin, connection: kept)
        backend.transferEnded(id, splicedBytes: splicedTotal, handedToLibcurl: outcome == nil)
        if let outcome {
            carryOut(outcome)
        } else {
            headContinuation.take()?.resume(returning: nil)
            channel.finish(.cancelled)
        }
    }

    static func head(_ response: HTTPClientResponse) -> HTTPClientResponse? { response }
}
#endif
