/// How an `rtmps://` connection checks the server it reaches.
///
/// By default the server's certificate must be trusted by the system's store (OpenSSL's default
/// locations, which honour `SSL_CERT_FILE` and `SSL_CERT_DIR`) and valid for the URL's host.
public struct RTMPTLSOptions: Hashable, Sendable {
    /// Whether the certificate is verified; `false` accepts any certificate, for a test server.
    public var verifiesCertificate: Bool
    /// A PEM file of CA certificates trusted besides the system's (a private CA).
    public var trustedCertificatesFile: String?

    public init(verifiesCertificate: Bool = true, trustedCertificatesFile: String? = nil) {
        self.verifiesCertificate = verifiesCertificate
        self.trustedCertificatesFile = trustedCertificatesFile
    }
}
