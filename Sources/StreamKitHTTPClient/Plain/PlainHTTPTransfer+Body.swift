#if canImport(Glibc)
import Foundation
import StreamKitCore
import StreamKitHTTP

// The body: received into chunks for the reader, or spliced into the file it handed over.
extension PlainHTTPTransfer {
    /// Reads the body to where `length` says it ends, after the `leftover` that came with the head.
    /// - Returns: Whether it was read to its end (false when no head was delivered).
    func readBody(startingWith leftover: [UInt8], length planned: PlainHTTPResponsePlan.BodyLength) throws -> Bool {
        guard case .streaming = machine.state else { return false }
        let length: Int64? =
            switch planned {
            case .bytes(let count): count
            case .untilClose: nil
            }
        var received = Int64(leftover.count)
        var held: [UInt8]?
        // Bytes the channel refused while full are held, and offered again once it has room.
        while held != nil || length.map({ received < $0 }) ?? true {
            // A socket that never runs dry never makes `wait` look: cancellation and the total
            // deadline are checked at every step too.
            try checkStop()
            try waitWhilePaused()
            if let bytes = held {
                held = nil
                if try offer(bytes) == false { held = bytes }
                continue
            }
            let want = length.map { Int(clamping: $0 - received) } ?? Int.max
            if !spliceRefused, let sink = channel.directWriteTarget {
                let moved = try splice(upTo: want, into: sink)
                if moved < 0 { continue }  // refused: read again by `recv`
                guard moved > 0 else { return try bodyEnded(length: length) }
                received += Int64(moved)
                channel.movedDirectly(moved)
                machine.bodyAccepted(moved, now: .now)
                channel.flush(now: .now)
                continue
            }
            let count = try receive(upTo: want, reused: false)
            guard count > 0 else { return try bodyEnded(length: length) }
            received += Int64(count)
            let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if try offer(bytes) == false { held = bytes }
        }
        return true
    }

    /// The server closed the connection: the end of a body without a length, else a truncation.
    /// - Returns: true: the body was read to its end.
    private func bodyEnded(length: Int64?) throws -> Bool {
        guard length == nil else {
            throw HTTPClientError(.truncatedBody, url: request.url, detail: "the server closed the connection")
        }
        return true
    }

    /// Hands `bytes` to the channel. - Returns: false when the channel paused (hold them).
    private func offer(_ bytes: [UInt8]) throws -> Bool {
        switch bytes.withUnsafeBytes({ channel.receive($0) }) {
        case .accepted:
            break
        case .writeDirectly(let descriptor, let offset):
            try FileOutput.write(bytes, to: descriptor, at: offset)
            channel.wroteDirectly(bytes.count)
        case .pause:
            backend.bodyPaused()
            return false
        case .abort:
            throw HTTPClientError.cancelled
        }
        machine.bodyAccepted(bytes.count, now: .now)
        channel.flush(now: .now)
        return true
    }

    /// Waits while the channel holds the producer (a full buffer, or no read yet).
    private func waitWhilePaused() throws {
        guard channel.isProducerPaused else { return }
        machine.paused(now: .now)
        while channel.isProducerPaused {
            if case .timedOut = try wait(for: nil, events: 0, until: totalDeadline) {
                throw totalTimeout()
            }
        }
        machine.resumed(now: .now)
    }
}
#endif
