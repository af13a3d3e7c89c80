import Foundation

// The destination policy and the test hook, as every transport applies them to the address it
// is about to connect to.
extension HTTPClientConfiguration {
    /// Whether the transports check each address before connecting.
    var checksDestinations: Bool { destinationPolicy != nil || connectHook != nil }

    /// Whether a connection to `address` (`nil`: not an IP address) may be made: the policy's
    /// decision, then the test hook's.
    func decideConnection(to address: IPAddress?) -> DestinationPolicy.Decision {
        guard let address else { return checksDestinations ? .refused(rule: "not an IP address") : .allowed }
        if let decision = destinationPolicy?.decide(address), decision != .allowed { return decision }
        if let connectHook, !connectHook(address) { return .refused(rule: "refused by the connect hook") }
        return .allowed
    }
}

extension HTTPClientError {
    /// The error for a request none of whose addresses the policy allowed.
    ///
    /// - Parameters:
    ///   - url: The URL fetched (a redirect's target after a redirect).
    ///   - address: The last address refused.
    ///   - rule: The rule that refused it.
    static func destinationRefused(url: String, address: String, rule: String) -> HTTPClientError {
        let host = URLComponents(string: url)?.host ?? url
        return HTTPClientError(
            .destinationRefused, url: url, detail: "refused to connect to \(address) for host \(host): \(rule)")
    }
}
