import Foundation
import StreamKitCore
import StreamKitHLS

/// Keys and an IV given by the user for an HLS download (`--key`, `--key-file`, `--iv`), for streams
/// whose key server needs a browser session. A key given this way is never fetched: it is stored in
/// the package as a fetched key is (so the package plays offline), or used for `--decrypt`.
public struct HLSUserKeys: Hashable, Sendable {
    /// A key for one key URI.
    public struct KeyForURI: Hashable, Sendable {
        /// The key URI: absolute as the playlist's URI resolves, or as written (relative) in the
        /// media playlist.
        public var uri: String
        /// The 16 key bytes.
        public var key: [UInt8]

        /// Creates a key for `uri`.
        public init(uri: String, key: [UInt8]) {
            self.uri = uri
            self.key = key
        }
    }

    /// One key for every key URI (`--key`); a key in ``keysByURI`` wins over it.
    public var key: [UInt8]?
    /// Keys for given key URIs (`--key-file`), in the order given; the first for a URI wins.
    public var keysByURI: [KeyForURI]
    /// The IV of every AES-128 key (`--iv`), instead of the playlist's or the media sequence
    /// number's, for streams whose playlist gives a wrong IV or none.
    public var iv: [UInt8]?

    /// Creates user keys; none by default.
    public init(key: [UInt8]? = nil, keysByURI: [KeyForURI] = [], iv: [UInt8]? = nil) {
        self.key = key
        self.keysByURI = keysByURI
        self.iv = iv
    }

    /// Whether nothing is given.
    public var isEmpty: Bool { key == nil && keysByURI.isEmpty && iv == nil }

    /// The key for the key file of `uri` (absolute, as planned) in a media playlist at `playlistURL`:
    /// the first of ``keysByURI`` naming it, else ``key``; `nil` when the user gave none.
    func key(forURI uri: String, playlistURL: String) -> [UInt8]? {
        keysByURI.first { Self.names($0.uri, uri, playlistURL: playlistURL) }?.key ?? key
    }

    /// The URIs of ``keysByURI`` that name none of `keyFiles` (key URIs as planned, with the URL of
    /// the media playlist that lists each), in the order given.
    func unmatchedURIs(_ keyFiles: [(uri: String, playlistURL: String)]) -> [String] {
        keysByURI.map(\.uri).filter { given in
            !keyFiles.contains { Self.names(given, $0.uri, playlistURL: $0.playlistURL) }
        }
    }

    /// Whether `given` names key URI `uri` of the media playlist at `playlistURL`: the same absolute
    /// URI, or a reference that resolves to it against the playlist's URL.
    static func names(_ given: String, _ uri: String, playlistURL: String) -> Bool {
        // Planned URIs have their spaces percent-encoded (``RenditionPlanner/normalized(_:)``).
        let resolved = resolveURI(given, against: playlistURL).replacingOccurrences(of: " ", with: "%20")
        return resolved == uri || given.replacingOccurrences(of: " ", with: "%20") == uri
    }

    /// `resolved` with ``iv`` as the IV of its AES-128 keys. A map's key takes it only when the
    /// playlist wrote an IV for it: a map under a key without one is a clear map.
    static func overridingIV(_ iv: [UInt8]?, in resolved: ResolvedSegment) -> ResolvedSegment {
        guard let iv else { return resolved }
        var copy = resolved
        for index in copy.keys.indices where copy.keys[index].method == .aes128 {
            copy.keys[index].iv = iv
            copy.keys[index].isIVExplicit = true
        }
        if let map = copy.map {
            for index in map.keys.indices where map.keys[index].method == .aes128 && map.keys[index].isIVExplicit {
                copy.map?.keys[index].iv = iv
            }
        }
        return copy
    }
}
