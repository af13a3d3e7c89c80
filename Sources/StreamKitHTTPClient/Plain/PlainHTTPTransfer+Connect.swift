#if canImport(Glibc)
import Foundation
import Glibc
import StreamKitCore
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
        let addresses: [ResolvedAddress]
        do throws(ResolveError) {
            // PlainHTTPTarget takes ports 1...65535 only.
            addresses = try ResolvedAddress.resolve(host: origin.host, port: UInt16(clamping: origin.port))
        } catch {
            throw HTTPClientError(
                .couldNotResolveHost, url: request.url,
                detail: "could not resolve host \(origin.host): \(error.message)")
        }
        // Each address but the last gets a second at most, so that one that drops packets (an
        // IPv6 route that goes nowhere) gives way to the next.
        var attempts = ConnectAttempts(
            addresses: addresses, deadline: earliest(.now + timeouts.connect, totalDeadline) ?? .now + timeouts.connect)
        // The destination policy sees each address before its socket exists.
        var refusal: (address: String, rule: String)?
        var triedToConnect = false
        while let attempt = attempts.next(now: .now) {
            let address = attempt.address.bytes.withUnsafeBytes { IPAddress(socketAddress: $0) }
            if case .refused(let rule) = backend.configuration.decideConnection(to: address) {
                refusal = (address.map { "\($0)" } ?? "a non-IP address", rule)
                continue
            }
            triedToConnect = true
            let socket: Int32
            let connected: Bool
            do {
                (socket, connected) = try attempt.address.startConnecting()
            } catch {
                attempts.failed(error.code)
                continue
            }
            if !connected {
                let outcome: WaitResult
                do {
                    outcome = try wait(for: socket, events: Int16(POLLOUT), until: attempt.deadline)
                } catch let error as HTTPClientError where error.kind == .totalTimeout {
                    // Not connected yet: a connect timeout, as libcurl reports it.
                    close(socket)
                    throw connectTimeout()
                } catch {
                    close(socket)
                    throw error
                }
                if outcome == .timedOut {
                    close(socket)
                    guard attempts.movesOnAfterTimeout(of: attempt, now: .now) else { throw connectTimeout() }
                    attempts.failed(ETIMEDOUT)
                    continue
                }
                let error = ResolvedAddress.pendingError(of: socket)
                guard outcome == .ready, error == 0 else {
                    if error != 0 { attempts.failed(error) }
                    close(socket)
                    continue
                }
            }
            var one: Int32 = 1
            let size = socklen_t(MemoryLayout<Int32>.size)
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, size)
            setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &one, size)  // as libcurl's
            return socket
        }
        if let refusal, !triedToConnect {
            throw HTTPClientError.destinationRefused(url: request.url, address: refusal.address, rule: refusal.rule)
        }
        throw HTTPClientError(
            .connectFailed, url: request.url,
            detail:
                "failed to connect to \(origin.host) port \(origin.port): \(String(cString: strerror(attempts.lastError)))"
        )
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
