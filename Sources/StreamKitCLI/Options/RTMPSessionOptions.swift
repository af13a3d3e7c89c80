import Foundation
import StreamKitRTMP

/// The options every `rtmp` command has: the handshake, the Enhanced RTMP codecs `connect`
/// announces, how an `rtmps://` server is checked, `--json`.
struct RTMPSessionOptions: ParsableArguments {
    @Flag(help: "Use the Flash Player 9 digest handshake.")
    var digestHandshake = false
    @Option(
        valueName: "fourccs",
        help: """
            Also announce these Enhanced RTMP codecs in connect (comma-separated: hvc1, av01, vp09, \
            avc1, Opus, fLaC, ac-3, ec-3, .mp3, mp4a). publish always announces those its file uses; \
            record announces none without this.
            """)
    var enhancedCodecs: String?
    @Option(valueName: "path", help: "For rtmps://, also trust the CA certificates in this PEM file.")
    var caFile: String?
    @Flag(help: "For rtmps://, accept the server's certificate without verifying it.")
    var insecure = false
    @Flag(help: "Print progress and the result as JSON lines.") var json = false

    init() {}

    mutating func validate() throws {
        if let enhancedCodecs, EnhancedCodecs(list: enhancedCodecs) == nil {
            throw ValidationError(
                "--enhanced-codecs: '\(enhancedCodecs)' names a codec that is not one of "
                    + EnhancedCodecs.knownNames.joined(separator: ", "))
        }
        guard let caFile else { return }
        if insecure { throw ValidationError("--ca-file and --insecure contradict each other: pass one") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: caFile, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw ValidationError("--ca-file \(caFile): no such file")
        }
    }

    /// `configuration` with the handshake, the Enhanced RTMP codecs and the certificate checks asked for.
    func connection(_ configuration: RTMPConnection.Configuration) -> RTMPConnection.Configuration {
        var configuration = configuration
        configuration.client.handshake = digestHandshake ? .digest : .plain
        if let enhancedCodecs, let codecs = EnhancedCodecs(list: enhancedCodecs) {
            configuration.client.enhancedCodecs = codecs
        }
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
