#if canImport(Glibc)
import CStreamKitLinux
import Foundation
import Glibc
import StreamKitCore
import StreamKitHTTP

// Splicing: from the socket through a pipe into the reader's file, without copying the bytes.
extension PlainHTTPTransfer {
    /// Moves up to `limit` bytes from the socket into the file through the pipe.
    /// - Returns: The bytes moved; 0 at the end of the stream; -1 when splicing is refused here
    ///   (the transfer reads by `recv` from then on).
    func splice(upTo limit: Int, into sink: (descriptor: Int32, offset: Int64)) throws -> Int {
        guard let pipe = try openPipe() else {
            spliceRefused = true
            return -1
        }
        var moved = 0
        while true {
            moved = CStreamKitLinux.splice(
                connection, nil, pipe.write, nil, min(limit, pipe.capacity),
                SK_SPLICE_F_MOVE | SK_SPLICE_F_MORE | SK_SPLICE_F_NONBLOCK)
            if moved >= 0 { break }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try wait(for: connection, events: Int16(POLLIN), until: bodyDeadline())
            case EINVAL, ENOSYS:
                spliceRefused = true
                return -1
            default:
                throw systemFailure(.connectionReset, "splice")
            }
        }
        guard moved > 0 else { return 0 }
        var offset = Int(sink.offset)  // __off64_t
        var left = moved
        while left > 0 {
            let written = CStreamKitLinux.splice(pipe.read, nil, sink.descriptor, &offset, left, SK_SPLICE_F_MOVE)
            if written > 0 {
                left -= written
                continue
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && (errno == EINVAL || errno == ENOSYS) {
                // The file system takes no splice: copy what the pipe holds, and `recv` from now on.
                spliceRefused = true
                try drainPipe(pipe.read, count: left, into: sink.descriptor, at: Int64(offset))
                return moved
            }
            let failure = SystemError.current("splice", subject: "descriptor \(sink.descriptor)")
            throw HTTPClientError.fileWriteFailed(failure, url: request.url, byteOffset: Int64(offset))
        }
        splicedTotal += moved
        return moved
    }

    private func drainPipe(_ source: Int32, count: Int, into descriptor: Int32, at offset: Int64) throws {
        var left = count
        var offset = offset
        while left > 0 {
            let got = read(source, buffer.baseAddress!, min(left, buffer.count))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw systemFailure(.transportFailure, "read from pipe") }
            try FileOutput.write(UnsafeRawBufferPointer(rebasing: buffer[0..<got]), to: descriptor, at: offset)
            left -= got
            offset += Int64(got)
        }
    }

    private func openPipe() throws -> (read: Int32, write: Int32, capacity: Int)? {
        if let pipe { return pipe }
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
        // A bigger pipe moves more per call; the default (64 KiB) is kept where that is refused.
        _ = fcntl(ends[1], SK_F_SETPIPE_SZ, Int32(1 << 20))
        let capacity = Int(fcntl(ends[1], SK_F_GETPIPE_SZ))
        let opened = (read: ends[0], write: ends[1], capacity: capacity > 0 ? capacity : 64 << 10)
        pipe = opened
        return opened
    }
}
#endif
