/// Which `Host` values name this server (RFC 9110 §7.2), the defence against DNS rebinding.
///
/// A page on another site can make a browser send requests to 127.0.0.1 by pointing its own
/// name at it, but the browser still sends that name in `Host`. So a request is accepted only
/// when its host is the listening address, a loopback literal or `localhost` (for a loopback
/// server), a configured name, or — for a server listening on every interface — any IP literal
/// (a rebinding attack needs a name, never a literal). The port must be the server's.
struct HTTPHostPolicy: Hashable, Sendable {
    let port: UInt16
    private let names: Set<String>
    private let acceptsAnyAddressLiteral: Bool

    init(listening address: ServerSocket.Address, port: UInt16, hostNames: [String]) {
        self.port = port
        var names = Set(hostNames.map { Self.normalize($0) })
        names.insert(Self.normalize(address.text))
        if address.isLoopback || address.isWildcard {
            names.formUnion(["localhost", "127.0.0.1", "::1"])
        }
        self.names = names
        self.acceptsAnyAddressLiteral = address.isWildcard
    }

    /// Whether `host` (a `Host` value or an absolute target's authority) names this server.
    func allows(_ host: String) -> Bool {
        guard let (name, hostPort) = Self.split(host) else { return false }
        if let hostPort {
            guard hostPort == port else { return false }
        } else if port != 80 {
            return false
        }
        if names.contains(name) { return true }
        if acceptsAnyAddressLiteral {
            return ServerSocket.parseIPv4(name) != nil || ServerSocket.parseIPv6(name) != nil
        }
        if let literal = ServerSocket.parseIPv6(name) {
            return names.contains { ServerSocket.parseIPv6($0) == literal }
        }
        return false
    }

    /// The host (lowercased, IPv6 without brackets, no trailing dot) and the port if given;
    /// `nil` when the value is not `host[:port]`.
    static func split(_ value: String) -> (String, UInt16?)? {
        var host: Substring
        var portText: Substring?
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            host = value[value.index(after: value.startIndex)..<close]
            let rest = value[value.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else {
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" && $0 != "@" })
        else { return nil }
        var port: UInt16?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
                let number = UInt16(portText)
            else { return nil }
            port = number
        }
        return (normalize(String(host)), port)
    }

    private static func normalize(_ name: String) -> String {
        var name = name.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") && name.count > 1 { name.removeLast() }
        return name
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
