#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address: its bytes in network order.
package struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    package let bytes: [UInt8]

    /// An address from its 4 or 16 bytes.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses a literal as `inet_pton` does: IPv4 as four decimal parts (not the decimal, octal
    /// or hex spellings `inet_aton` also reads), IPv6 in any of its forms, in brackets or not.
    package init?(_ text: String) {
        var literal = Substring(text)
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        if literal.contains(":") {
            var storage = in6_addr()
            guard inet_pton(AF_INET6, String(literal), &storage) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &storage) { Array($0) }
        } else {
            var storage = in_addr()
            guard inet_pton(AF_INET, String(literal), &storage) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &storage) { Array($0) }
        }
    }

    /// The address in a `sockaddr_in` or `sockaddr_in6`, or `nil` for another family.
    package init?(socketAddress: UnsafeRawBufferPointer) {
        guard socketAddress.count >= MemoryLayout<sockaddr>.size else { return nil }
        let family = socketAddress.loadUnaligned(
            fromByteOffset: MemoryLayout<sockaddr>.offset(of: \sockaddr.sa_family)!, as: sa_family_t.self)
        let start: Int
        let count: Int
        switch Int32(family) {
        case AF_INET where socketAddress.count >= MemoryLayout<sockaddr_in>.size:
            (start, count) = (MemoryLayout<sockaddr_in>.offset(of: \sockaddr_in.sin_addr)!, 4)
        case AF_INET6 where socketAddress.count >= MemoryLayout<sockaddr_in6>.size:
            (start, count) = (MemoryLayout<sockaddr_in6>.offset(of: \sockaddr_in6.sin6_addr)!, 16)
        default:
            return nil
        }
        bytes = Array(socketAddress[start..<(start + count)])
    }

    /// Whether this is an IPv4 address.
    package var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address an IPv6 address carries and reaches: IPv4-mapped (`::ffff:a.b.c.d`),
    /// IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, but not `::` and `::1`)
    /// and the NAT64 well-known prefix (`64:ff9b::a.b.c.d`); `nil` for any other address.
    package var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let prefix = Array(bytes[0..<12])
        let tail = Array(bytes[12..<16])
        let zeros = [UInt8](repeating: 0, count: 8)
        let carriesIPv4 =
            prefix == zeros + [0, 0, 0xff, 0xff]  // mapped
            || prefix == zeros + [0xff, 0xff, 0, 0]  // translated
            || prefix == [0, 0x64, 0xff, 0x9b] + zeros  // NAT64
            || (prefix == zeros + [0, 0, 0, 0] && !(tail[0..<3] == [0, 0, 0] && tail[3] <= 1))  // compatible
        return carriesIPv4 ? IPAddress(bytes: tail) : nil
    }

    /// The text `inet_ntop` gives (`10.0.0.1`, `fe80::1`, `::ffff:10.0.0.1`).
    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { source in
            inet_ntop(family, source.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A range of addresses in CIDR notation: `10.0.0.0/8`, `fd00::/8`; a bare address is a range of
/// one (`/32`, `/128`).
package struct IPAddressRange: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the range (the bits past the prefix cleared).
    package let network: IPAddress
    /// How many leading bits every address of the range shares with ``network``.
    package let prefixLength: Int

    /// The range of `address`'s first `prefixLength` bits (host bits cleared).
    package init?(_ address: IPAddress, prefixLength: Int) {
        guard (0...(address.bytes.count * 8)).contains(prefixLength) else { return nil }
        network = IPAddress(bytes: Self.masked(address.bytes, prefixLength))!
        self.prefixLength = prefixLength
    }

    /// Parses `ADDRESS/LENGTH` or a bare `ADDRESS` (see ``IPAddress/init(_:)``); host bits past
    /// the prefix are ignored (`10.1.2.3/8` is `10.0.0.0/8`).
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        var length = address.bytes.count * 8
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber),
                parts[1].count <= 3, let value = Int(parts[1])
            else { return nil }
            length = value
        }
        self.init(address, prefixLength: length)
    }

    /// Whether `address` is in the range (an IPv4 address is never in an IPv6 range, nor the reverse).
    package func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, prefixLength) == network.bytes
    }

    /// `10.0.0.0/8`, or the bare address for a range of one.
    package var description: String {
        prefixLength == network.bytes.count * 8 ? "\(network)" : "\(network)/\(prefixLength)"
    }

    private static func masked(_ bytes: [UInt8], _ prefixLength: Int) -> [UInt8] {
        bytes.indices.map { index in
            let kept = min(8, max(0, prefixLength - index * 8))
            return kept == 0 ? 0 : bytes[index] & ~UInt8((1 << (8 - kept)) - 1)
        }
    }
}
