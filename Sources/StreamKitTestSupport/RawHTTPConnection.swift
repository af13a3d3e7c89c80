import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response as read off the wire by ``RawHTTPConnection``.
public struct RawHTTPResponse: Sendable, CustomStringConvertible {
    /// The status code.
    public let status: Int
    /// The header fields in order.
    public let headers: [(name: String, value: String)]
    /// The body, with chunked framing removed.
    public let body: [UInt8]

    /// The first value of the field `name` (any case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    public var description: String {
        "\(status) " + headers.map { "\($0.name): \($0.value)" }.joined(separator: "; ") + " (\(body.count) bytes)"
    }
}

/// A blocking TCP client that sends exact bytes and reads HTTP/1.1 responses: for what curl
/// would normalize away (`..` in paths, malformed requests, pipelining, slow sending).
///
/// Every call blocks; from async tests run them through ``runBlocking(_:)`` so that the
/// cooperative thread pool stays free for the server's tasks.
public final class RawHTTPConnection: @unchecked Sendable {
    // Unchecked: a test uses one connection from one thread at a time.

    /// The socket (-1 once ``reset()`` closed it).
    public private(set) var descriptor: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host`:`port` (IPv4), with `timeout` for every later read and write (a hang
    /// detector, not a bound: long enough for a server whose test process is busy for seconds).
    ///
    /// - Parameter receiveBufferSize: A small receive buffer (set before connecting, so that the
    ///   window stays small) keeps a server's large response in flight while the test reads slowly.
    public init(
        port: UInt16, host: String = "127.0.0.1", timeout: Duration = .seconds(30), receiveBufferSize: Int32? = nil
    ) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBufferSize {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var time = timeval(
            tv_sec: Int(timeout.components.seconds),
            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw TestSupportError("connect 127.0.0.1:\(port): \(message)")
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Sends `bytes`, all of them.
    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                sendWithoutSignal(descriptor, $0.baseAddress! + sent, bytes.count - sent)
            }
            guard count > 0 else { throw TestSupportError("send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Shuts down the sending side (the server reads end of input).
    public func shutdownWriting() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Changes the receive buffer size (a larger one lets a slow-started transfer finish fast).
    public func setReceiveBufferSize(_ size: Int32) {
        var value = size
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Closes at once with a reset instead of a FIN (SO_LINGER 0, then close: a `shutdown` would
    /// send a FIN, which a server may take for a half-close and keep answering).
    public func reset() {
        guard descriptor >= 0 else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close(descriptor)
        descriptor = -1
    }

    /// Reads one response. `bodyless` for the answer to HEAD (headers only).
    ///
    /// - Throws: ``TestSupportError`` on timeout, or when the server closes before a full response.
    public func readResponse(bodyless: Bool = false) throws -> RawHTTPResponse {
        let headEnd = try readUntil([0x0D, 0x0A, 0x0D, 0x0A])
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestSupportError("bad status line in '\(headText.prefix(200))'")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        var body: [UInt8] = []
        if bodyless || status == 204 || status == 304 || (100..<200).contains(status) {
            // no body
        } else if header("transfer-encoding")?.lowercased() == "chunked" {
            while true {
                let lineEnd = try readUntil([0x0D, 0x0A])
                let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
                buffer.removeFirst(lineEnd + 2)
                guard let size = Int(sizeText, radix: 16) else {
                    throw TestSupportError("bad chunk size '\(sizeText)'")
                }
                try fill(size + 2)
                body += buffer[..<size]
                buffer.removeFirst(size + 2)
                if size == 0 {
                    break
                }
            }
        } else if let lengthText = header("content-length"), let length = Int(lengthText) {
            try fill(length)
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            body = readToEnd()  // it starts with the bytes read along with the head
        }
        return RawHTTPResponse(status: status, headers: headers, body: body)
    }

    /// Reads until the server closes (or the timeout passes), returning everything not yet consumed.
    public func readToEnd() -> [UInt8] {
        var result = buffer
        buffer = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            result += chunk[..<count]
        }
        return result
    }

    /// Reads up to `count` bytes of whatever arrives next (raw), or fewer when the server closes.
    public func readSome(_ count: Int) throws -> [UInt8] {
        if buffer.isEmpty { _ = try readMore() }
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// Whether the server has closed the connection: a read returns end of input (or a reset)
    /// within `timeout`.
    public func isClosedByPeer(within timeout: Duration = .seconds(5)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return true }
            if count < 0 {
                if errno == ECONNRESET || errno == EPIPE { return true }
                usleep(2_000)
            }
        }
        return false
    }

    // MARK: Private

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for index in searchFrom...(buffer.count - marker.count)
                where buffer[index] == marker[0] && Array(buffer[index..<(index + marker.count)]) == marker {
                    return index
                }
                searchFrom = buffer.count - marker.count + 1
            }
            guard try readMore() else {
                throw TestSupportError("connection closed after \(buffer.count) bytes without \(marker)")
            }
        }
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count {
            guard try readMore() else {
                throw TestSupportError("connection closed after \(buffer.count) of \(count) bytes")
            }
        }
    }

    private func readMore() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            buffer += chunk[..<count]
            return true
        }
        if count == 0 || errno == ECONNRESET { return false }
        throw TestSupportError("read: \(String(cString: strerror(errno)))")
    }
}

private func sendWithoutSignal(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return send(descriptor, pointer, count, Int32(MSG_NOSIGNAL))
    #else
    return send(descriptor, pointer, count, 0)
    #endif
}

/// Runs blocking work on a thread of its own, off the cooperative pool, and returns its result.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}

/// Whether two byte sequences are equal. Use it in `#expect` for large bodies: a failed `==` on
/// collections makes Swift Testing compute a diff, which for megabytes takes minutes.
public func sameBytes(_ lhs: some Sequence<UInt8>, _ rhs: some Sequence<UInt8>) -> Bool {
    lhs.elementsEqual(rhs)
}
