#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a TLS client sends and checks for the host of an `rtmps://` URL: the server name
/// indication, and the name the certificate must hold.
package struct TLSServerIdentity: Hashable, Sendable {
    /// A name the certificate must hold.
    package enum Name: Hashable, Sendable {
        /// A DNS name, matched against DNS subject alternative names (wildcards included).
        case dns(String)
        /// An IPv4 or IPv6 address, matched against IP subject alternative names.
        case ipAddress(String)
    }

    /// Sent as SNI; none for an address, which RFC 6066 §3 does not allow there.
    package var serverName: String?
    /// What the certificate is checked against.
    package var expected: Name

    package init(host: String) {
        if Self.isAddress(host) {
            serverName = nil
            expected = .ipAddress(host)
        } else {
            // A fully qualified name's final dot is not part of the name in a certificate or SNI.
            let name = host.hasSuffix(".") ? String(host.dropLast()) : host
            serverName = name
            expected = .dns(name)
        }
    }

    /// Whether `host` is an IPv4 or IPv6 address literal.
    private static func isAddress(_ host: String) -> Bool {
        var storage = in6_addr()
        return inet_pton(AF_INET, host, &storage) == 1 || inet_pton(AF_INET6, host, &storage) == 1
    }
}
