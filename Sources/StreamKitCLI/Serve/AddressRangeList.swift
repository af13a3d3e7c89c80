import StreamKitHTTPClient

/// A comma-separated list of address ranges in CIDR notation, as `--proxy-allow` and
/// `--proxy-deny` take them: `10.0.0.0/8,fd00::/8`; a bare address is a range of one.
struct AddressRangeList: ExpressibleByArgument, CustomStringConvertible {
    let ranges: [IPAddressRange]

    init?(argument: String) {
        guard case .success(let ranges) = DestinationPolicy.ranges(argument), !ranges.isEmpty else { return nil }
        self.ranges = ranges
    }

    static var valueDescription: String { "address ranges such as 192.168.1.0/24,fd00::/8 or 10.0.0.5" }

    var description: String { ranges.map(\.description).joined(separator: ",") }
}
