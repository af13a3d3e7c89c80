#if canImport(Glibc)
import Foundation
import StreamKitHTTP

// The response head, read line by line into the transfer state machine, and the plan for its body.
extension PlainHTTPTransfer {
    /// The body bytes that came with the final head, and how the rest of the body is read.
    struct BodyStart {
        var leftover: [UInt8]
        var length: PlainHTTPResponsePlan.BodyLength
        var afterwards: PlainHTTPResponsePlan.ConnectionAfterBody
    }

    static let headReadSize = 4096

    /// Reads head lines into the state machine until it delivers the final head.
    /// - Returns: The body bytes received with the head, and how the rest is read.
    func readHead(reused: Bool) throws -> BodyStart {
        var pending: [UInt8] = []
        pending.reserveCapacity(Self.headReadSize)
        var receivedAny = false
        while true {
            // A head is read a few KiB at a time, so that little of the body comes with it (those
            // bytes are copied; the rest of the body is spliced).
            let count = try receive(upTo: Self.headReadSize, reused: reused && !receivedAny)
            guard count > 0 else {
                if !receivedAny {
                    if reused { throw Detour.staleConnection }
                    throw HTTPClientError(.emptyResponse, url: request.url, detail: "the server sent nothing")
                }
                throw HTTPClientError(
                    .malformedResponse, url: request.url, detail: "the connection closed within the response head")
            }
            receivedAny = true
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            var start = 0
            while let newline = pending[start...].firstIndex(of: 10) {
                let line = pending[start...newline]
                start = newline + 1
                let now = ContinuousClock.now
                switch machine.headerLine(line, now: now, url: { self.request.url }) {
                case .deliverHead(let head):
                    return try begin(head, leftover: Array(pending[start...]))
                case .abort(let error):
                    throw error
                case .none:
                    guard line.count <= 2, case .awaitingHead(let parser) = machine.state,
                        let last = parser.lastHead, last.status.isRedirection
                    else { continue }
                    // A redirect libcurl follows goes there; one it would not follow is the final
                    // response, as libcurl delivers it.
                    if PlainHTTPResponsePlan(
                        redirect: last, request: request, defaultRedirectLimit: backend.configuration.redirectLimit)
                        != nil
                    {
                        throw Detour.handToLibcurl
                    }
                    switch machine.bodyWillArrive(now: now, url: { self.request.url }) {
                    case .deliverHeadThenAccept(let head):
                        return try begin(head, leftover: Array(pending[start...]))
                    case .abort(let error):
                        throw error
                    case .accept:
                        continue
                    }
                }
            }
            pending.removeFirst(start)
            if pending.count > 100 << 10 {
                throw HTTPClientError(
                    .headerTooLarge, url: request.url, detail: "a response head line over 100 KB")
            }
        }
    }

    /// Plans `head`'s body (a response for libcurl leaves by ``Detour/handToLibcurl``), buffers
    /// `leftover`, holds the body until the reader asks, and hands the head over.
    private func begin(_ head: HTTPClientResponseHead, leftover: [UInt8]) throws -> BodyStart {
        let plan = PlainHTTPResponsePlan(head: head, request: request, bytesWithHead: leftover.count)
        guard case .read(let length, let afterwards) = plan else { throw Detour.handToLibcurl }
        let kept: ArraySlice<UInt8>
        switch length {
        case .bytes(let count): kept = leftover.prefix(Int(clamping: count))
        case .untilClose: kept = leftover[...]
        }
        if !kept.isEmpty {
            _ = kept.withUnsafeBytes { channel.receive($0) }
            machine.bodyAccepted(kept.count, now: .now)
        }
        channel.holdUntilAsked()
        deliverHead(head)
        return BodyStart(leftover: leftover, length: length, afterwards: afterwards)
    }
}
#endif
