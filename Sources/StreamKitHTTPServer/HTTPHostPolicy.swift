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
    /// `Host` values accepted as they are, without parsing: the usual `127.0.0.1:PORT` and kin.
    private let exactHosts: Set<String>

    init(listening address: ServerSocket.Address, port: UInt16, hostNames: [String]) {
        self.port = port
        var names = Set(hostNames.map { Self.normalize($0) })
        names.insert(Self.normalize(address.text))
        if address.isLoopback || address.isWildcard {
            names.formUnion(["localhost", "127.0.0.1", "::1"])
        }
        self.names = names
        self.acceptsAnyAddressLiteral = address.isWildcard
        self.exactHosts = Set(
            names.map { name in
                let host = name.contains(":") ? "[\(name)]" : name
                return port == 80 ? host : "\(host):\(port)"
            })
    }

    /// Whether `host` (a `Host` value or an absolute target's authority) names this server.
    func allows(_ host: String) -> Bool {
        if exactHosts.contains(host) { return true }
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
        let utf8 = value.utf8
        var hostBytes: Substring.UTF8View
        var portBytes: Substring.UTF8View?
        let bracketed = utf8.first == 0x5B
        if bracketed {  // [IPv6]
            guard let close = utf8.firstIndex(of: 0x5D) else { return nil }
            hostBytes = value[utf8.index(after: utf8.startIndex)..<close].utf8
            let rest = value[utf8.index(after: close)...].utf8
            if !rest.isEmpty {
                guard rest.first == 0x3A else { return nil }
                portBytes = rest.dropFirst()
            }
        } else if let colon = utf8.firstIndex(of: 0x3A) {
            hostBytes = value[..<colon].utf8
            portBytes = value[utf8.index(after: colon)...].utf8
        } else {
            hostBytes = value[...].utf8
        }
        // Printable ASCII without the delimiters that would make it more than a host (a colon
        // only inside brackets).
        guard !hostBytes.isEmpty,
            hostBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2F && $0 != 0x40 && (bracketed || $0 != 0x3A) })
        else { return nil }
        var port: UInt16?
        if let portBytes {
            guard !portBytes.isEmpty, portBytes.count <= 5, portBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let number = UInt16(String(Substring(portBytes)))
            else { return nil }
            port = number
        }
        return (normalize(String(Substring(hostBytes))), port)
    }

    private static func normalize(_ name: String) -> String {
        var name = name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? name.lowercased() : name
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") && name.count > 1 { name.removeLast() }
        return name
    }
}
