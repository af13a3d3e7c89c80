/// Which addresses a client may connect to, decided on the address actually connected to (after
/// DNS, at every redirect), so that a web page cannot use a proxy to reach what only this machine
/// reaches: the cloud metadata service, link-local devices, the LAN beyond what the user allows.
///
/// - Always refused, whatever the lists say: the cloud metadata addresses, link-local
///   (`169.254.0.0/16`, `fe80::/10`), multicast, `0.0.0.0/8`, `240.0.0.0/4`, `::`, and the
///   local-use NAT64 prefix `64:ff9b:1::/48` (its IPv4 address cannot be read without its length).
/// - An IPv6 address that carries an IPv4 one (mapped, translated, compatible, NAT64
///   `64:ff9b::/96`) is decided on that IPv4 address.
/// - ``deniedRanges`` are refused too.
/// - Private and loopback ranges (``privateRanges``) are allowed, unless ``allowedPrivateRanges``
///   is set: then only the parts of them inside one of its ranges are.
/// - Every other (public) address is allowed.
package struct DestinationPolicy: Hashable, Sendable {
    /// What the policy says about one address.
    package enum Decision: Hashable, Sendable {
        case allowed
        /// Refused by `rule`, such as `169.254.0.0/16 (link-local)`.
        case refused(rule: String)
    }

    /// A named range.
    package struct Rule: Hashable, Sendable, CustomStringConvertible {
        package let range: IPAddressRange
        package let name: String

        init(_ range: String, _ name: String) {
            self.range = IPAddressRange(range)!
            self.name = name
        }

        /// `169.254.0.0/16 (link-local)`.
        package var description: String { "\(range) (\(name))" }
    }

    /// The ranges always refused, the most specific first (so that a refusal names the metadata
    /// service rather than the link-local range it is in).
    package static let alwaysRefused: [Rule] = [
        Rule("169.254.169.254", "cloud metadata"),  // AWS, GCP, Azure, Oracle, DigitalOcean and most others
        Rule("fd00:ec2::254", "cloud metadata, AWS IPv6"),
        Rule("fd20:ce::254", "cloud metadata, GCP IPv6"),
        Rule("100.100.100.200", "cloud metadata, Alibaba"),
        Rule("168.63.129.16", "cloud metadata, Azure wire server"),
        Rule("192.0.0.192", "cloud metadata, Oracle legacy"),
        Rule("169.254.0.0/16", "link-local"),
        Rule("fe80::/10", "link-local"),
        Rule("224.0.0.0/4", "multicast"),
        Rule("ff00::/8", "multicast"),
        Rule("0.0.0.0/8", "this network"),
        Rule("240.0.0.0/4", "reserved, broadcast"),
        Rule("::/128", "unspecified"),
        Rule("64:ff9b:1::/48", "local-use NAT64"),
    ]

    /// The private and loopback ranges: allowed unless ``allowedPrivateRanges`` narrows them.
    package static let privateRanges: [Rule] = [
        Rule("127.0.0.0/8", "loopback"),
        Rule("::1/128", "loopback"),
        Rule("10.0.0.0/8", "private"),
        Rule("172.16.0.0/12", "private"),
        Rule("192.168.0.0/16", "private"),
        Rule("100.64.0.0/10", "shared address space"),
        Rule("fc00::/7", "unique local"),
    ]

    /// When set, the only parts of ``privateRanges`` allowed (`--proxy-allow`); public addresses
    /// stay allowed, the always-refused ranges stay refused.
    package var allowedPrivateRanges: [IPAddressRange]?
    /// Ranges refused besides the always-refused ones (`--proxy-deny`), public ones included.
    package var deniedRanges: [IPAddressRange]

    /// A policy with these lists; the defaults refuse only the always-refused ranges.
    package init(allowedPrivateRanges: [IPAddressRange]? = nil, deniedRanges: [IPAddressRange] = []) {
        self.allowedPrivateRanges = allowedPrivateRanges
        self.deniedRanges = deniedRanges
    }

    /// Whether a connection to `address` may be made, and if not, which rule refuses it.
    package func decide(_ address: IPAddress) -> Decision {
        let decided = address.embeddedIPv4 ?? address
        // The IPv6 spelling is checked too: `::ffff:0:0/96` in a deny list refuses every mapped address.
        let spellings = decided == address ? [address] : [decided, address]
        for rule in Self.alwaysRefused where spellings.contains(where: rule.range.contains) {
            return .refused(rule: rule.description)
        }
        for range in deniedRanges where spellings.contains(where: range.contains) {
            return .refused(rule: "\(range) (--proxy-deny)")
        }
        if let allowed = allowedPrivateRanges,
            let rule = Self.privateRanges.first(where: { spellings.contains(where: $0.range.contains) }),
            !allowed.contains(where: { range in spellings.contains(where: range.contains) })
        {
            return .refused(rule: "\(rule), not in --proxy-allow")
        }
        return .allowed
    }

    /// Parses a comma-separated list of ranges (`10.0.0.0/8,fd00::/8`), as `--proxy-allow` and
    /// `--proxy-deny` take them.
    ///
    /// - Returns: The ranges, or the first item that is not a range.
    package static func ranges(_ list: String) -> Result<[IPAddressRange], RangeListError> {
        var ranges: [IPAddressRange] = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            let text = String(item.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
            guard let range = IPAddressRange(text) else { return .failure(RangeListError(item: text)) }
            ranges.append(range)
        }
        return .success(ranges)
    }

    /// An item of a range list that is not an address or a CIDR range.
    package struct RangeListError: Error, Hashable, Sendable {
        package let item: String
    }
}
