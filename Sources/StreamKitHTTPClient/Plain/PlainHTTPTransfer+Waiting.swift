#if canImport(Glibc)
import Foundation
import Glibc
import StreamKitHTTP
import Synchronization

// Waiting on the socket and the wake-up descriptor, against the idle and total deadlines.
extension PlainHTTPTransfer {
    enum WaitResult {
        case ready
        case woken
        case timedOut
    }

    /// Receives into `buffer`, waiting for bytes. - Returns: The count; 0 at the end of the stream.
    func receive(upTo limit: Int = .max, reused: Bool) throws -> Int {
        while true {
            let count = recv(connection, buffer.baseAddress!, min(limit, buffer.count), 0)
            if count >= 0 { return count }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try wait(for: connection, events: Int16(POLLIN), until: bodyDeadline())
            case ECONNRESET where reused:
                throw Detour.staleConnection
            default:
                throw systemFailure(.connectionReset, "recv")
            }
        }
    }

    /// Waits for `events` on `socket` (or only for a wake-up when `nil`) until `deadline`, and
    /// throws the cancellation when one was asked for. An idle or total deadline that passes is
    /// thrown as its timeout; `.timedOut` is returned for a connect deadline.
    func wait(
        for socket: Int32?, events: Int16, until deadline: ContinuousClock.Instant?
    ) throws
        -> WaitResult
    {
        var entries = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        if let socket { entries.append(pollfd(fd: socket, events: events, revents: 0)) }
        while true {
            try checkCancellation()
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return try timedOut(deadline) }
                timeout = Int32(clamping: left.wholeMilliseconds)
            }
            let result = poll(&entries, nfds_t(entries.count), timeout)
            if result < 0 && errno == EINTR { continue }
            try checkCancellation()
            if entries[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, 8)
                if socket == nil { return .woken }
            }
            if socket != nil, entries[1].revents != 0 { return .ready }
            if result == 0, let deadline { return try timedOut(deadline) }
        }
    }

    /// Throws the cancellation asked for, if one was.
    private func checkCancellation() throws {
        if let cancellation = control.withLock({ $0.cancellation }) { throw cancellation }
    }

    /// Throws the cancellation asked for, or the total timeout once it passed.
    func checkStop() throws {
        try checkCancellation()
        if let totalDeadline, ContinuousClock.now >= totalDeadline { throw totalTimeout() }
    }

    /// The deadline the body (or head) waits against: the idle one, or the total one.
    func bodyDeadline() -> ContinuousClock.Instant? {
        earliest(machine.idleDeadline, totalDeadline)
    }

    private func timedOut(_ deadline: ContinuousClock.Instant) throws -> WaitResult {
        if let totalDeadline, deadline >= totalDeadline { throw totalTimeout() }
        if let error = machine.idleTimeoutError(now: .now) { throw error }
        return .timedOut
    }

    func totalTimeout() -> HTTPClientError {
        HTTPClientError(
            .totalTimeout, url: request.url,
            detail: "the transfer took longer than \(timeouts.total.map { "\($0)" } ?? "its limit")")
    }

    func systemFailure(_ kind: HTTPClientError.Kind, _ call: String) -> HTTPClientError {
        HTTPClientError(kind, url: request.url, detail: "\(call): \(String(cString: strerror(errno)))")
    }

    func earliest(
        _ first: ContinuousClock.Instant?, _ second: ContinuousClock.Instant?
    ) -> ContinuousClock.Instant? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }
}
#endif
