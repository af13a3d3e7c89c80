#if canImport(Glibc)
import Foundation
import Glibc
import StreamKitHTTP

// Connections: a kept one or a fresh one, and the request head sent on it.
extension PlainHTTPTransfer {
    /// Sends the request and reads the response head, on a reused connection or a fresh one.
    /// - Returns: The body bytes that came with the head, and how the rest is read.
    func exchange() throws -> BodyStart {
        while true {
            let reused: Bool
            if let idle = backend.idleConnection(to: target.origin) {
                connection = idle
                reused = true
            } else {
                connection = try connect()
                reused = false
                backend.connectionOpened()
            }
            do {
                try send(target.head, reused: reused)
                return try readHead(reused: reused)
            } catch Detour.staleConnection {
                close(connection)
                connection = -1
            }
        }
    }

    private func connect() throws -> Int32 {
        let origin = target.origin
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(origin.host, String(origin.port), &hints, &list)
        guard status == 0, let list else {
            throw HTTPClientError(
                .couldNotResolveHost, url: request.url,
                detail: "could not resolve host \(origin.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let deadline = earliest(.now + timeouts.connect, totalDeadline) ?? .now + timeouts.connect
        var failure = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            // An address that does not answer within a second gives way to the next one (an
            // IPv6 route that drops packets, say); the last one has what is left.
            let attemptDeadline = entry == nil ? deadline : min(deadline, .now + .seconds(1))
            let socket = Glibc.socket(
                address.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else {
                failure = errno
                continue
            }
            if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                let outcome: WaitResult
                do {
                    outcome = try wait(for: socket, events: Int16(POLLOUT), until: attemptDeadline)
                } catch let error as HTTPClientError where error.kind == .totalTimeout {
                    // Not connected yet: a connect timeout, as libcurl reports it.
                    close(socket)
                    throw connectTimeout()
                } catch {
                    close(socket)
                    throw error
                }
                switch outcome {
                case .ready:
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        var one: Int32 = 1
                        let size = socklen_t(MemoryLayout<Int32>.size)
                        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, size)
                        setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &one, size)  // as libcurl's
                        return socket
                    }
                    failure = error
                case .timedOut:
                    close(socket)
                    if entry != nil, ContinuousClock.now < deadline {
                        failure = ETIMEDOUT
                        continue
                    }
                    throw connectTimeout()
                case .woken:
                    break  // not returned while a socket is waited for
                }
            } else {
                failure = errno
            }
            close(socket)
        }
        throw HTTPClientError(
            .connectFailed, url: request.url,
            detail: "failed to connect to \(origin.host) port \(origin.port): \(String(cString: strerror(failure)))")
    }

    private func connectTimeout() -> HTTPClientError {
        HTTPClientError(
            .connectTimeout, url: request.url,
            detail: "connection to \(target.origin.host) port \(target.origin.port) timed out after \(timeouts.connect)"
        )
    }

    private func send(_ bytes: [UInt8], reused: Bool) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes {
                Glibc.send(connection, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result >= 0 {
                sent += result
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try wait(for: connection, events: Int16(POLLOUT), until: bodyDeadline())
            case EPIPE, ECONNRESET:
                if reused && sent == 0 { throw Detour.staleConnection }
                throw systemFailure(.connectionReset, "send")
            default:
                throw systemFailure(.connectionReset, "send")
            }
        }
    }
}
#endif
