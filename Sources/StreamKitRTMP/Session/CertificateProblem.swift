/// Why the certificate of an `rtmps://` server was refused, decided from OpenSSL's verify result
/// (`X509_V_ERR_*`, whose values are part of OpenSSL's stable interface).
package enum CertificateProblem: Hashable, Sendable {
    /// The certificate is valid, but not for the host the URL names.
    case hostnameMismatch(certificateNames: [String])
    /// The certificate signs itself and is not in the trust store.
    case selfSigned
    /// No trusted certificate signs the chain.
    case unknownIssuer
    case expired
    case notYetValid
    /// Any other failure, in OpenSSL's words.
    case other(String)

    /// The problem a verify result stands for.
    ///
    /// - Parameters:
    ///   - verifyResult: `SSL_get_verify_result`.
    ///   - description: OpenSSL's text for it (`X509_verify_cert_error_string`).
    ///   - certificateNames: The names the server's certificate is for (DNS and IP subject
    ///     alternative names, else its common name).
    package init(verifyResult: Int, description: String, certificateNames: [String]) {
        switch verifyResult {
        case 62, 64: self = .hostnameMismatch(certificateNames: certificateNames)  // HOSTNAME_, IP_ADDRESS_MISMATCH
        case 18, 19: self = .selfSigned  // DEPTH_ZERO_SELF_SIGNED_CERT, SELF_SIGNED_CERT_IN_CHAIN
        case 2, 20, 21: self = .unknownIssuer  // UNABLE_TO_GET_ISSUER_CERT(_LOCALLY), UNABLE_TO_VERIFY_LEAF_SIGNATURE
        case 10: self = .expired  // CERT_HAS_EXPIRED
        case 9: self = .notYetValid  // CERT_NOT_YET_VALID
        default: self = .other(description)
        }
    }

    /// What went wrong, naming the server.
    package func message(host: String, port: UInt16) -> String {
        let server = "\(host):\(port)"
        switch self {
        case .hostnameMismatch(let names):
            let holder = names.isEmpty ? "names no host" : "is for \(names.joined(separator: ", "))"
            return "hostname mismatch for \(server) (certificate \(holder))"
        case .selfSigned: return "certificate of \(server) not trusted (self-signed)"
        case .unknownIssuer: return "certificate of \(server) not trusted (unknown issuer)"
        case .expired: return "certificate of \(server) expired"
        case .notYetValid: return "certificate of \(server) not yet valid"
        case .other(let description): return "certificate of \(server): \(description)"
        }
    }
}
