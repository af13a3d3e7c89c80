#if canImport(CStreamKitOpenSSL)
import CStreamKitOpenSSL
import StreamKitCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One TLS client session of OpenSSL's libssl over two memory buffers: the owner moves the
/// ciphertext between them and its socket (``feed(_:)``, ``takeOutput(into:)``), so waiting
/// for the socket and the errors of `send` and `recv` stay the owner's, as for plain TCP.
///
/// Not thread-safe: one owner (``RTMPSocket``) uses it from one task at a time.
final class TLSClientSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    /// Ciphertext from the server, fed by the owner; libssl reads it.
    private let input: OpaquePointer
    /// Ciphertext libssl wrote for the server, taken by the owner.
    private let output: OpaquePointer
    private let host: String
    private let port: UInt16
    /// The names of the server's certificate, noted while it is verified.
    fileprivate var certificateNames: [String] = []

    /// A client session for `host` (SNI and the certificate check) that has not started its handshake.
    ///
    /// - Throws: ``RTMPError`` (TLS handshake failed) when libssl cannot be set up or the CA file read.
    init(host: String, port: UInt16, options: RTMPTLSOptions) throws(RTMPError) {
        self.host = host
        self.port = port
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tlsHandshakeFailed(host: host, port: port, "cannot create a TLS context: \(Self.queuedError())")
        }
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        if options.verifiesCertificate {
            if let file = options.trustedCertificatesFile, SSL_CTX_load_verify_locations(context, file, nil) != 1 {
                SSL_CTX_free(context)
                throw .tlsHandshakeFailed(
                    host: host, port: port, "cannot read CA certificates from \(file): \(Self.queuedError())")
            }
            SSL_CTX_set_default_verify_paths(context)
        }
        let ssl = SSL_new(context)
        let input = BIO_new(BIO_s_mem())
        let output = BIO_new(BIO_s_mem())
        guard let ssl, let input, let output else {
            // Each of these accepts NULL.
            SSL_free(ssl)
            BIO_free(input)
            BIO_free(output)
            SSL_CTX_free(context)
            throw .tlsHandshakeFailed(host: host, port: port, "cannot create a TLS session: \(Self.queuedError())")
        }
        self.context = context
        self.ssl = ssl
        self.input = input
        self.output = output
        // The session owns both buffers from here on, and frees them with itself.
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        // A server's request to renegotiate is refused instead of making a write wait for reads.
        SSL_set_options(ssl, Self.noRenegotiation)

        let identity = TLSServerIdentity(host: host)
        if let serverName = identity.serverName {
            _ = serverName.withCString { name in
                SSL_ctrl(
                    ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                    UnsafeMutableRawPointer(
                        mutating: name))
            }
        }
        guard options.verifiesCertificate else { return }
        let expected: Int32
        switch identity.expected {
        case .dns(let name): expected = SSL_set1_host(ssl, name)
        case .ipAddress(let address): expected = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), address)
        }
        guard expected == 1 else {
            throw .tlsHandshakeFailed(host: host, port: port, "cannot check the certificate for \(host)")
        }
        SSL_set_ex_data(ssl, Self.ownerIndex, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_verify(ssl, SSL_VERIFY_PEER, noteCertificateNames)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Advances the handshake with what has been fed.
    func handshake() -> HandshakeStep {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .done }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needsInput
        default: return .failed(handshakeFailure())
        }
    }

    /// Decrypts up to `buffer.count` bytes of what has been fed.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needsInput
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: return .failed(.tlsConnectionLost(peer: "\(host):\(port)", Self.queuedError()))
        }
    }

    /// Encrypts every byte of `bytes`; the ciphertext waits for ``takeOutput(into:)``.
    func write(_ bytes: UnsafeRawBufferPointer) throws(RTMPError) {
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let count = SSL_write(ssl, bytes.baseAddress! + offset, Int32(clamping: bytes.count - offset))
            guard count > 0 else {
                // The output buffer grows as needed, and renegotiation is refused: nothing to wait for.
                throw .tlsConnectionLost(peer: "\(host):\(port)", Self.queuedError())
            }
            offset += Int(count)
        }
    }

    /// Hands libssl bytes received from the server.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        // A memory buffer takes every byte.
        BIO_write(input, bytes.baseAddress, Int32(bytes.count))
    }

    /// Whether libssl has ciphertext for the server.
    var hasOutput: Bool { BIO_ctrl_pending(output) > 0 }

    /// Moves the ciphertext libssl wrote for the server onto the end of `buffer`.
    func takeOutput(into buffer: inout ByteBuffer) {
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: pending)
        let count = chunk.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32(clamping: pending)) }
        if count > 0 { buffer.writeBytes(chunk[0..<Int(count)]) }
    }

    /// Writes `close_notify`; reading goes on until the server's.
    func close() {
        ERR_clear_error()
        SSL_shutdown(ssl)
    }

    // MARK: Private

    /// `SSL_OP_NO_RENEGOTIATION` (a function-like macro in C).
    private static let noRenegotiation: UInt64 = 1 << 30
    /// The ex-data slot that leads the verify callback to its session (slot 0, the application's).
    fileprivate static let ownerIndex: Int32 = 0

    /// The failure of a handshake: the certificate, when verifying it failed, else libssl's reason.
    private func handshakeFailure() -> RTMPError {
        let verifyResult = SSL_get_verify_result(ssl)
        if verifyResult != Int(X509_V_OK) {
            let problem = CertificateProblem(
                verifyResult: verifyResult, description: String(cString: X509_verify_cert_error_string(verifyResult)),
                certificateNames: certificateNames)
            return .certificateRejected(host: host, port: port, problem)
        }
        return .tlsHandshakeFailed(host: host, port: port, Self.queuedError())
    }

    /// The reason of the oldest error on this thread's OpenSSL error queue, which it clears.
    private static func queuedError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "the connection failed" }
        if let reason = ERR_reason_error_string(code) { return String(cString: reason) }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The DNS and IP subject alternative names of `certificate`, else its common name.
    fileprivate static func names(of certificate: OpaquePointer) -> [String] {
        var names: [String] = []
        if let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) {
            let stack = OpaquePointer(raw)
            for index in 0..<OPENSSL_sk_num(stack) {
                guard let entry = OPENSSL_sk_value(stack, index)?.assumingMemoryBound(to: GENERAL_NAME.self) else {
                    continue
                }
                switch entry.pointee.type {
                case GEN_DNS:
                    if let name = entry.pointee.d.dNSName { names.append(text(of: name)) }
                case GEN_IPADD:
                    if let address = entry.pointee.d.iPAddress.flatMap({ address(of: $0) }) { names.append(address) }
                default: break
                }
            }
            GENERAL_NAMES_free(stack)
        }
        if names.isEmpty, let subject = X509_get_subject_name(certificate) {
            let index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1)
            if index >= 0, let entry = X509_NAME_get_entry(subject, index), let data = X509_NAME_ENTRY_get_data(entry) {
                names.append(text(of: data))
            }
        }
        return names
    }

    private static func text(of string: UnsafeMutablePointer<ASN1_STRING>) -> String {
        guard let data = ASN1_STRING_get0_data(string) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))), as: UTF8.self)
    }

    /// An IP subject alternative name (4 or 16 bytes) as text.
    private static func address(of string: UnsafeMutablePointer<ASN1_STRING>) -> String? {
        let count = Int(ASN1_STRING_length(string))
        guard let data = ASN1_STRING_get0_data(string), count == 4 || count == 16 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(count == 4 ? AF_INET : AF_INET6, data, &text, socklen_t(text.count)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// libssl's verify callback: notes the names of the server's own certificate (depth 0) for the
/// error message, and keeps libssl's verdict.
private func noteCertificateNames(_ preverified: Int32, _ store: OpaquePointer?) -> Int32 {
    guard let store, X509_STORE_CTX_get_error_depth(store) == 0,
        let certificate = X509_STORE_CTX_get_current_cert(store),
        let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
        let owner = SSL_get_ex_data(OpaquePointer(ssl), TLSClientSession.ownerIndex)
    else { return preverified }
    let session = Unmanaged<TLSClientSession>.fromOpaque(owner).takeUnretainedValue()
    if session.certificateNames.isEmpty { session.certificateNames = TLSClientSession.names(of: certificate) }
    return preverified
}
#else
import StreamKitCore

/// Without OpenSSL (Apple platforms) there is no TLS yet: creating a session fails, saying so.
final class TLSClientSession {
    init(host: String, port: UInt16, options: RTMPTLSOptions) throws(RTMPError) { throw .unsupported("RTMPS") }
    func handshake() -> HandshakeStep { .failed(.unsupported("RTMPS")) }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult { .failed(.unsupported("RTMPS")) }
    func write(_ bytes: UnsafeRawBufferPointer) throws(RTMPError) { throw .unsupported("RTMPS") }
    func feed(_ bytes: UnsafeRawBufferPointer) {}
    var hasOutput: Bool { false }
    func takeOutput(into buffer: inout ByteBuffer) {}
    func close() {}
}
#endif

extension TLSClientSession {
    /// Where the handshake stands.
    enum HandshakeStep {
        case done
        /// More bytes from the server are needed (after sending ``takeOutput(into:)``).
        case needsInput
        case failed(RTMPError)
    }

    /// What a read of decrypted bytes gave.
    enum ReadResult {
        case bytes(Int)
        /// Every fed byte is used up: feed more.
        case needsInput
        /// The server closed the TLS session (`close_notify`).
        case closed
        case failed(RTMPError)
    }
}
