import StreamKitRTMP

/// `--digest-handshake` and `--json`, which every `rtmp` command has.
struct RTMPSessionOptions: ParsableArguments {
    @Flag(help: "Use the Flash Player 9 digest handshake.")
    var digestHandshake = false
    @Flag(help: "Print progress and the result as JSON lines.") var json = false

    init() {}

    /// `configuration` with the handshake asked for.
    func connection(_ configuration: RTMPConnection.Configuration) -> RTMPConnection.Configuration {
        var configuration = configuration
        configuration.client.handshake = digestHandshake ? .digest : .plain
        return configuration
    }

    /// Refuses an `<rtmp-url>` that is not one, saying why.
    static func validate(url: String) throws {
        do {
            _ = try RTMPURL(url)
        } catch {
            throw ValidationError("invalid <rtmp-url>: \(error.detail)")
        }
    }
}
