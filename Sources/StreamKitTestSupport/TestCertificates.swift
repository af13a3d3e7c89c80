import Foundation

/// A certificate and its private key, PEM files.
public struct TLSCertificate: Sendable {
    public let certificate: URL
    public let key: URL
}

/// Certificates for TLS tests, made with the `openssl` command in a directory of their own: a
/// CA, a server certificate it signs for `localhost` and `127.0.0.1`, one it signs for
/// `other.example` only, and a self-signed one for `localhost` and `127.0.0.1` that nobody trusts.
public struct TestCertificates: Sendable {
    /// The CA's certificate, to trust.
    public let authority: URL
    /// Signed by the CA for `localhost` and `127.0.0.1`.
    public let server: TLSCertificate
    /// Signed by the CA for `other.example` only.
    public let otherHost: TLSCertificate
    /// Self-signed, for `localhost` and `127.0.0.1`.
    public let selfSigned: TLSCertificate

    /// The name `otherHost` is for.
    public static let otherHostName = "other.example"

    /// Makes a fresh set, valid for two days.
    ///
    /// - Throws: ``TestSupportError`` when `openssl` is missing or fails.
    public static func make() async throws -> TestCertificates {
        let directory = try TestRun.makeTemporaryDirectory("certificates")
        func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
        // Our own configuration, so that the system's openssl.cnf adds no extensions of its own.
        let configuration = file("openssl.cnf")
        try """
        [req]
        distinguished_name = name
        prompt = no
        [name]
        CN = unused
        [authority]
        basicConstraints = critical, CA:TRUE
        keyUsage = critical, keyCertSign, cRLSign
        subjectKeyIdentifier = hash
        [server]
        basicConstraints = CA:FALSE
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:localhost, IP:127.0.0.1
        [other]
        basicConstraints = CA:FALSE
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:\(otherHostName)
        """.write(to: configuration, atomically: true, encoding: .utf8)
        let newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

        func selfSigned(_ name: String, subject: String, extensions: String) async throws -> TLSCertificate {
            let pair = TLSCertificate(certificate: file("\(name).pem"), key: file("\(name).key"))
            try await Tool.openssl.run(
                ["req", "-x509", "-new"] + newKey + [
                    "-keyout", pair.key.path, "-out", pair.certificate.path, "-days", "2", "-subj", subject,
                    "-config", configuration.path, "-extensions", extensions,
                ])
            return pair
        }
        func signed(_ name: String, subject: String, extensions: String, serial: Int) async throws -> TLSCertificate {
            let pair = TLSCertificate(certificate: file("\(name).pem"), key: file("\(name).key"))
            let request = file("\(name).csr")
            try await Tool.openssl.run(
                ["req", "-new"] + newKey + [
                    "-keyout", pair.key.path, "-out", request.path, "-subj", subject, "-config", configuration.path,
                ])
            try await Tool.openssl.run([
                "x509", "-req", "-in", request.path, "-CA", file("ca.pem").path, "-CAkey", file("ca.key").path,
                "-set_serial", "\(serial)", "-days", "2", "-out", pair.certificate.path, "-extfile",
                configuration.path, "-extensions", extensions,
            ])
            return pair
        }

        let authority = try await selfSigned("ca", subject: "/CN=StreamKit Test CA", extensions: "authority")
        return TestCertificates(
            authority: authority.certificate,
            server: try await signed("server", subject: "/CN=localhost", extensions: "server", serial: 1),
            otherHost: try await signed("other", subject: "/CN=\(otherHostName)", extensions: "other", serial: 2),
            selfSigned: try await selfSigned("self-signed", subject: "/CN=localhost", extensions: "server"))
    }
}
