import StreamKitRTMP
import Testing

/// What the TLS client decides from plain values: SNI and the name checked, and the words of a
/// certificate failure.
@Suite struct TLSDecisionTests {
    @Test(arguments: [
        ("localhost", String?("localhost"), TLSServerIdentity.Name.dns("localhost")),
        ("live.example.com.", "live.example.com", .dns("live.example.com")),
        ("127.0.0.1", nil, .ipAddress("127.0.0.1")),
        ("::1", nil, .ipAddress("::1")),
        ("2001:db8::5", nil, .ipAddress("2001:db8::5")),
        ("1.2.3", "1.2.3", .dns("1.2.3")),
    ])
    func serverIdentity(_ host: String, _ serverName: String?, _ expected: TLSServerIdentity.Name) {
        let identity = TLSServerIdentity(host: host)
        #expect(identity.serverName == serverName)
        #expect(identity.expected == expected)
    }

    @Test(arguments: [
        (62, ["localhost", "127.0.0.1"], "hostname mismatch for h:443 (certificate is for localhost, 127.0.0.1)"),
        (64, [], "hostname mismatch for h:443 (certificate names no host)"),
        (18, [], "certificate of h:443 not trusted (self-signed)"),
        (19, [], "certificate of h:443 not trusted (self-signed)"),
        (20, [], "certificate of h:443 not trusted (unknown issuer)"),
        (21, [], "certificate of h:443 not trusted (unknown issuer)"),
        (10, [], "certificate of h:443 expired"),
        (9, [], "certificate of h:443 not yet valid"),
        (26, [], "certificate of h:443: unsuitable certificate purpose"),
    ])
    func certificateProblems(_ verifyResult: Int, _ names: [String], _ message: String) {
        let problem = CertificateProblem(
            verifyResult: verifyResult, description: "unsuitable certificate purpose", certificateNames: names)
        #expect(problem.message(host: "h", port: 443) == message)
        let error = RTMPError.certificateRejected(host: "h", port: 443, problem)
        #expect(error.kind == .certificateRejected && "\(error)" == "RTMP certificate verify failed: \(message)")
    }
}
