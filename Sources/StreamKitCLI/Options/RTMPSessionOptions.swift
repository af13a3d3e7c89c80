import Foundation
import StreamKitRTMP

/// The options every `rtmp` command has: the handshake, how an `rtmps://` server is checked, `--json`.
struct RTMPSessionOptions: ParsableArguments {
    @Flag(help: "Use the Flash Player 9 digest handshake.")
    var digestHandshake = false
    @Option(valueName: "path", help: "For rtmps://, also trust the CA certificates in this PEM file.")
    var caFile: String?
    @Flag(help: "For rtmps://, accept the server's certificate without verifying it.")
    var insecure = false
    @Flag(help: "Print progress and the result as JSON lines.") var json = false

    init() {}

    mutating func validate() throws {
        guard let caFile else { return }
        if insecure { throw ValidationError("--ca-file and --insecure contradict each other: pass one") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: caFile, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw ValidationError("--ca-file \(caFile): no such file")
        }
    }

    /// `configuration` with the handshake and the certificate checks asked for.
    func connection(_ configuration: RTMPConnection.Configuration) -> RTMPConnection.Configuration {
        var configuration = configuration
        configuration.client.handshake = digestHandshake ? .digest : .plain
        configuration.tls = RTMPTLSOptions(verifiesCertificate: !insecure, trustedCertificatesFile: caFile)
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
