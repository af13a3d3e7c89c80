import StreamKitCore

/// RTMPS: the TLS session between the bytes the connection reads and writes and the socket.
/// libssl works on memory buffers; these move its ciphertext with the socket's own `recv` and
/// `send` and wait for readiness as plain TCP does.
extension RTMPSocket {
    /// Runs the TLS handshake on the connected socket, within the connect timeout.
    ///
    /// - Throws: ``RTMPError``: TLS handshake failed (also when the server closes or does not
    ///   answer in time), certificate verify failed.
    func startTLS(host: String, port: UInt16, options: RTMPTLSOptions) async throws(RTMPError) {
        let session = try TLSClientSession(host: host, port: port, options: options)
        tls = session
        let deadline = ContinuousClock.now + configuration.connectTimeout
        func remaining() -> Duration { max(deadline - ContinuousClock.now, .zero) }
        func failure(_ outcome: ReadinessOutcome) -> RTMPError {
            outcome == .timedOut
                ? .tlsHandshakeFailed(
                    host: host, port: port, "no answer within \(configuration.connectTimeout) (is this an RTMPS port?)")
                : .connectionFailed(host: host, port: port, "cancelled")
        }
        while true {
            let step = session.handshake()
            if case .failed(let error) = step {
                // libssl's alert to the server, if the socket takes it; the failure is the news.
                _ = try? sendCiphertextNow()
                throw error
            }
            let flushed = try await flushCiphertext(timeout: remaining())
            guard flushed == .ready else { throw failure(flushed) }
            if case .done = step { return }
            guard let connection else { throw .connectionFailed(host: host, port: port, "cancelled") }
            guard let received = try receiveRaw(capacity: Self.recordSize) else {
                let outcome = await connection.wait(.read, timeout: remaining())
                guard outcome == .ready else { throw failure(outcome) }
                continue
            }
            guard received > 0 else {
                throw .tlsHandshakeFailed(
                    host: host, port: port,
                    "the server closed the connection during the handshake (is this an RTMPS port?)")
            }
            scratch.withUnsafeBytes { session.feed(UnsafeRawBufferPointer(rebasing: $0[..<received])) }
        }
    }

    /// Decrypted bytes onto the end of `buffer`: the count, 0 when the server has closed, `nil`
    /// when the socket has nothing more for now.
    func receive(
        _ session: TLSClientSession, appendingTo buffer: inout ByteBuffer, capacity: Int
    ) throws(RTMPError)
        -> Int?
    {
        while true {
            let result = scratch.withUnsafeMutableBytes {
                session.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<capacity]))
            }
            switch result {
            case .bytes(let count):
                buffer.writeBytes(scratch[0..<count])
                return count
            case .closed:
                return 0
            case .failed(let error):
                eventContinuation.yield(.error(error))
                throw error
            case .needsInput:
                // libssl may have answered the server while reading; it goes out when it can.
                try sendCiphertextNow()
                guard let received = try receiveRaw(capacity: max(capacity, Self.recordSize)) else { return nil }
                // The end of TCP without close_notify ends the stream, as it does without TLS.
                guard received > 0 else { return 0 }
                scratch.withUnsafeBytes { session.feed(UnsafeRawBufferPointer(rebasing: $0[..<received])) }
            }
        }
    }

    /// Encrypts `bytes`; ``writeCiphertext()`` sends them.
    func encrypt(_ bytes: ArraySlice<UInt8>, with session: TLSClientSession) throws(RTMPError) {
        let failure = bytes.withUnsafeBytes { raw -> RTMPError? in
            do throws(RTMPError) {
                try session.write(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            eventContinuation.yield(.error(failure))
            throw failure
        }
    }

    /// Sends all ciphertext, waiting for the socket to accept more when it is full.
    ///
    /// - Throws: ``RTMPError``: idle timeout when nothing could be written for that long, connection lost.
    func writeCiphertext() async throws(RTMPError) {
        switch try await flushCiphertext(timeout: configuration.idleTimeout) {
        case .ready: return
        case .timedOut: throw .idleTimeout("\(peer) to accept data", after: configuration.idleTimeout ?? .zero)
        case .cancelled: throw .connectionClosed("the socket to \(peer) was closed while writing")
        }
    }

    /// Sends what libssl has written for the server as far as the socket takes it now.
    ///
    /// - Returns: Whether nothing is left to send.
    @discardableResult
    func sendCiphertextNow() throws(RTMPError) -> Bool {
        tls?.takeOutput(into: &ciphertext)
        while ciphertext.readableBytes > 0 {
            guard let sent = try sendRaw(ciphertext.readableBytesView) else { return false }
            _ = ciphertext.moveReaderIndex(forwardBy: sent)
        }
        ciphertext = ByteBuffer()
        return true
    }

    /// Sends all ciphertext, waiting (up to `timeout` each time) for the socket to take more.
    func flushCiphertext(timeout: Duration?) async throws(RTMPError) -> ReadinessOutcome {
        while try !sendCiphertextNow() {
            guard let connection else { return .cancelled }
            let outcome = await connection.wait(.write, timeout: timeout)
            guard outcome == .ready else { return outcome }
        }
        return .ready
    }

    /// The most ciphertext read at once: one whole TLS record.
    static var recordSize: Int { 16_384 + 256 }
}
