import Testing

@testable import StreamKitHTTPClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The destination policy as a table: address → decision, with the spellings a resolver turns
/// into the same address (decimal, octal, hex, IPv4 in IPv6). No socket: addresses are parsed,
/// or read by `getaddrinfo` with `AI_NUMERICHOST` (which never asks DNS).
@Suite struct DestinationPolicyTests {
    /// What `getaddrinfo` makes of a numeric host, as a transport would see it; `nil` when it is
    /// not numeric.
    private func resolved(_ host: String) -> IPAddress? {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "80", &hints, &list) == 0, let list, let socketAddress = list.pointee.ai_addr else {
            return nil
        }
        defer { freeaddrinfo(list) }
        return IPAddress(
            socketAddress: UnsafeRawBufferPointer(start: socketAddress, count: Int(list.pointee.ai_addrlen)))
    }

    private static let defaults = DestinationPolicy()

    @Test(arguments: [
        // Always refused, the metadata addresses by their own name.
        ("169.254.169.254", "169.254.169.254 (cloud metadata)"),
        ("fd00:ec2::254", "fd00:ec2::254 (cloud metadata, AWS IPv6)"),
        ("fd20:ce::254", "fd20:ce::254 (cloud metadata, GCP IPv6)"),
        ("100.100.100.200", "100.100.100.200 (cloud metadata, Alibaba)"),
        ("168.63.129.16", "168.63.129.16 (cloud metadata, Azure wire server)"),
        ("192.0.0.192", "192.0.0.192 (cloud metadata, Oracle legacy)"),
        ("169.254.170.2", "169.254.0.0/16 (link-local)"),
        ("169.254.0.0", "169.254.0.0/16 (link-local)"),
        ("169.254.255.255", "169.254.0.0/16 (link-local)"),
        ("fe80::1", "fe80::/10 (link-local)"),
        ("febf:ffff::1", "fe80::/10 (link-local)"),
        ("224.0.0.1", "224.0.0.0/4 (multicast)"),
        ("239.255.255.250", "224.0.0.0/4 (multicast)"),
        ("ff02::1", "ff00::/8 (multicast)"),
        ("0.0.0.0", "0.0.0.0/8 (this network)"),
        ("0.1.2.3", "0.0.0.0/8 (this network)"),
        ("255.255.255.255", "240.0.0.0/4 (reserved, broadcast)"),
        ("::", ":: (unspecified)"),
        ("64:ff9b:1::a9fe:a9fe", "64:ff9b:1::/48 (local-use NAT64)"),
        // IPv6 spellings of IPv4 addresses: decided on the IPv4 address.
        ("::ffff:169.254.169.254", "169.254.169.254 (cloud metadata)"),
        ("::ffff:a9fe:a9fe", "169.254.169.254 (cloud metadata)"),
        ("[::ffff:169.254.169.254]", "169.254.169.254 (cloud metadata)"),
        ("::ffff:0:169.254.1.1", "169.254.0.0/16 (link-local)"),
        ("::169.254.169.254", "169.254.169.254 (cloud metadata)"),
        ("64:ff9b::169.254.169.254", "169.254.169.254 (cloud metadata)"),
        ("::ffff:0.0.0.0", "0.0.0.0/8 (this network)"),
        ("::ffff:224.0.0.1", "224.0.0.0/4 (multicast)"),
        ("::2", "0.0.0.0/8 (this network)"),
    ])
    func alwaysRefused(address: String, rule: String) throws {
        let parsed = try #require(IPAddress(address), "\(address)")
        #expect(Self.defaults.decide(parsed) == .refused(rule: rule), "\(address)")
        // An allow list cannot let them through.
        let permissive = DestinationPolicy(allowedPrivateRanges: [
            IPAddressRange("::/0")!, IPAddressRange("0.0.0.0/0")!,
        ])
        #expect(permissive.decide(parsed) == .refused(rule: rule), "\(address)")
    }

    @Test(arguments: [
        "127.0.0.1", "127.255.255.254", "::1", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
        "100.64.0.1", "100.127.255.255", "fd00::1", "fc00::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1",
        // Public.
        "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.63.255.255", "169.253.255.255", "223.255.255.255",
        "2001:4860:4860::8888", "2606:4700::1111", "64:ff9b::808:808",
    ])
    func allowedByDefault(address: String) throws {
        let parsed = try #require(IPAddress(address), "\(address)")
        #expect(Self.defaults.decide(parsed) == .allowed, "\(address)")
    }

    /// The spellings `getaddrinfo` (and so libcurl and our connections) reads as IPv4: one
    /// number, octal and hex parts, fewer than four parts.
    @Test(arguments: [
        ("167772161", "10.0.0.1"),
        ("2852039166", "169.254.169.254"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("169.254.43518", "169.254.169.254"),
        ("169.16689662", "169.254.169.254"),
        ("012.0.0.1", "10.0.0.1"),
        ("0x0a.0.0.1", "10.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("1681915905", "100.64.0.1"),
        ("::ffff:10.0.0.1", "::ffff:10.0.0.1"),
        ("::ffff:169.254.169.254", "::ffff:169.254.169.254"),
        ("fe80::1", "fe80::1"),
    ])
    func resolverSpellingsAreDecidedOnTheAddressTheyMean(spelling: String, meaning: String) throws {
        let address = try #require(resolved(spelling), "getaddrinfo did not read \(spelling)")
        let expected = try #require(IPAddress(meaning))
        #expect(address == expected, "\(spelling)")
        #expect(Self.defaults.decide(address) == Self.defaults.decide(expected), "\(spelling)")
        // The strict parser of --proxy-allow does not read them.
        if !spelling.contains(":") && spelling != meaning { #expect(IPAddress(spelling) == nil, "\(spelling)") }
    }

    @Test func resolverSpellingsOfRefusedAddressesAreRefused() throws {
        for spelling in ["2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518", "0", "0x0"] {
            let address = try #require(resolved(spelling), "\(spelling)")
            guard case .refused = Self.defaults.decide(address) else {
                Issue.record("\(spelling) (\(address)) was allowed")
                continue
            }
        }
        let deny = DestinationPolicy(deniedRanges: [IPAddressRange("10.0.0.0/8")!])
        for spelling in ["167772161", "012.0.0.1", "0x0a.0.0.1", "10.1", "::ffff:10.0.0.1", "::ffff:a00:1"] {
            let address = try #require(resolved(spelling), "\(spelling)")
            #expect(deny.decide(address) == .refused(rule: "10.0.0.0/8 (--proxy-deny)"), "\(spelling)")
        }
    }

    @Test func anAllowListNarrowsThePrivateRangesOnly() throws {
        let policy = DestinationPolicy(
            allowedPrivateRanges: [IPAddressRange("192.168.1.0/24")!, IPAddressRange("fd12::/16")!])
        let table: [(String, DestinationPolicy.Decision)] = [
            ("192.168.1.20", .allowed),
            ("::ffff:192.168.1.20", .allowed),
            ("fd12::5", .allowed),
            ("192.168.2.1", .refused(rule: "192.168.0.0/16 (private), not in --proxy-allow")),
            ("127.0.0.1", .refused(rule: "127.0.0.0/8 (loopback), not in --proxy-allow")),
            ("::1", .refused(rule: "::1 (loopback), not in --proxy-allow")),
            ("10.0.0.1", .refused(rule: "10.0.0.0/8 (private), not in --proxy-allow")),
            ("::ffff:10.0.0.1", .refused(rule: "10.0.0.0/8 (private), not in --proxy-allow")),
            ("100.64.0.1", .refused(rule: "100.64.0.0/10 (shared address space), not in --proxy-allow")),
            ("fd00::1", .refused(rule: "fc00::/7 (unique local), not in --proxy-allow")),
            ("8.8.8.8", .allowed),
            ("2001:db8::1", .allowed),
            ("169.254.169.254", .refused(rule: "169.254.169.254 (cloud metadata)")),
        ]
        for (address, decision) in table {
            #expect(policy.decide(IPAddress(address)!) == decision, "\(address)")
        }
    }

    @Test func aDenyListRefusesPublicAndPrivateRanges() throws {
        let policy = DestinationPolicy(
            deniedRanges: [IPAddressRange("10.0.0.0/8")!, IPAddressRange("8.8.8.0/24")!, IPAddressRange("fd00::/8")!])
        #expect(policy.decide(IPAddress("10.200.0.1")!) == .refused(rule: "10.0.0.0/8 (--proxy-deny)"))
        #expect(policy.decide(IPAddress("64:ff9b::10.0.0.1")!) == .refused(rule: "10.0.0.0/8 (--proxy-deny)"))
        #expect(policy.decide(IPAddress("8.8.8.8")!) == .refused(rule: "8.8.8.0/24 (--proxy-deny)"))
        #expect(policy.decide(IPAddress("fd00::1")!) == .refused(rule: "fd00::/8 (--proxy-deny)"))
        #expect(policy.decide(IPAddress("8.8.4.4")!) == .allowed)
        #expect(policy.decide(IPAddress("192.168.0.1")!) == .allowed)
        // The IPv6 spelling is checked too.
        let mapped = DestinationPolicy(deniedRanges: [IPAddressRange("::ffff:0:0/96")!])
        #expect(mapped.decide(IPAddress("::ffff:8.8.8.8")!) == .refused(rule: "::ffff:0.0.0.0/96 (--proxy-deny)"))
        #expect(mapped.decide(IPAddress("8.8.8.8")!) == .allowed)
    }

    @Test func rangesParseAsCIDRWithBareAddressesAsOne() throws {
        let table: [(String, String?)] = [
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("10.1.2.3/8", "10.0.0.0/8"),
            ("192.168.1.7", "192.168.1.7"),
            ("192.168.1.7/32", "192.168.1.7"),
            ("0.0.0.0/0", "0.0.0.0/0"),
            ("fd00::/8", "fd00::/8"),
            ("[fd00::1]", "fd00::1"),
            ("fe80::/10", "fe80::/10"),
            ("::/0", "::/0"),
            ("2001:db8::1/128", "2001:db8::1"),
            ("172.16.0.0/12", "172.16.0.0/12"),
            ("10.0.0.0/33", nil),
            ("fd00::/129", nil),
            ("10.0.0.0/", nil),
            ("10.0.0.0/-1", nil),
            ("10.0.0.0/+8", nil),
            ("10.0.0.0/8/8", nil),
            ("167772161", nil),
            ("012.0.0.1", nil),
            ("10.1", nil),
            ("example.com", nil),
            ("", nil),
        ]
        for (text, expected) in table {
            #expect(IPAddressRange(text)?.description == expected, "\(text)")
        }
        #expect(
            try DestinationPolicy.ranges("10.0.0.0/8, fd00::/8").get().map(\.description) == ["10.0.0.0/8", "fd00::/8"])
        #expect(throws: DestinationPolicy.RangeListError(item: "nope")) {
            try DestinationPolicy.ranges("10.0.0.0/8,nope").get()
        }
        #expect(throws: DestinationPolicy.RangeListError(item: "")) {
            try DestinationPolicy.ranges("10.0.0.0/8,").get()
        }
    }

    @Test func rangesContainTheirAddressesOnly() {
        let range = IPAddressRange("172.16.0.0/12")!
        #expect(range.contains(IPAddress("172.16.0.0")!))
        #expect(range.contains(IPAddress("172.31.255.255")!))
        #expect(!range.contains(IPAddress("172.32.0.0")!))
        #expect(!range.contains(IPAddress("172.15.255.255")!))
        #expect(!range.contains(IPAddress("::ffff:172.16.0.1")!), "families do not mix")
        #expect(IPAddressRange("::/0")!.contains(IPAddress("::1")!))
        #expect(!IPAddressRange("::/0")!.contains(IPAddress("1.2.3.4")!))
    }
}
