import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitHLS
import StreamKitRTMP

/// The HLS package `rtmp record --hls DIR` or `--library` writes, laid out as a download's
/// (docs/CLI.md) so that `serve` lists and serves it and `export` reads it:
///
/// ```
/// DIR/index.m3u8      the multivariant playlist: one variant, video/index.m3u8
/// DIR/package.json    kind "rtmp", the source without credentials or query, status
/// DIR/video/          RTMPToHLS's folder: index.m3u8 (EVENT, live) and 00000.ts, ...
/// ```
///
/// The package appears (index.m3u8, package.json with status `recording`) with the first
/// segment, and becomes `complete` when the recording ends.
struct RTMPRecordPackage: Sendable {
    /// The folder of the media playlist and segments, inside the package.
    static let mediaFolder = "video"

    /// The package's folder.
    let directory: String
    /// The stream's URL without user, password, query or fragment.
    let source: String
    let created: String

    init(directory: String, url: String) {
        self.directory = directory
        source = Self.publicSource(url)
        created = PackageStore.timestamp()
    }

    /// RTMPToHLS's folder.
    var mediaDirectory: String { directory + "/" + Self.mediaFolder }

    /// A library id for one recording of `url`: 16 hexadecimal digits of SHA-256 over the URL, the
    /// start time and the library's salt (``DownloadManager/idSalt(directory:)``), so that every
    /// recording is a package of its own and the id does not tell the URL.
    static func id(url: String, started: Date, salt: String) -> String {
        let text = ["streamkit-rtmp-recording-1", url, String(started.timeIntervalSince1970), salt]
            .joined(separator: "\n")
        return String(SHA256.hash(Array(text.utf8)).hexString.prefix(16))
    }

    /// Writes `index.m3u8` and `package.json`.
    ///
    /// - Parameters:
    ///   - bandwidth: Bits per second of the media so far, for the variant's BANDWIDTH.
    ///   - codecs: The RFC 6381 codecs, for CODECS (left out when unknown).
    ///   - status: `recording` while it records, `complete` at the end.
    func write(bandwidth: Int, codecs: String?, status: String) throws(SystemError) {
        let variant = VariantStream(
            uri: Self.mediaFolder + "/" + RTMPToHLS.playlistName, bandwidth: max(bandwidth, 1), codecs: codecs)
        // Not EXT-X-INDEPENDENT-SEGMENTS: a segment may start without a key frame (LiveMediaPlaylist).
        let master = MultivariantPlaylist(version: 3, variants: [variant])
        try AtomicFile.write(
            Array(master.serialized().utf8), to: directory + "/index.m3u8", temporarySuffix: ".streamkit-tmp")
        let record = Record(
            id: (directory as NSString).lastPathComponent, source: source, status: status, created: created,
            updated: PackageStore.timestamp())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bytes = (try? encoder.encode(record)) ?? Data()
        try AtomicFile.write(Array(bytes), to: directory + "/package.json", temporarySuffix: ".streamkit-tmp")
    }

    /// `package.json` of a recording: the fields the library reads (`source`, `status`), and
    /// `kind` so that nothing takes it for a download's manifest.
    private struct Record: Encodable {
        var format = 1
        var kind = "rtmp"
        var id: String
        var source: String
        var live = true
        var status: String
        var created: String
        var updated: String
    }

    static func publicSource(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? ""
    }
}
