import Foundation
import StreamKitCore

/// An HLS task's user keys (``HLSUserKeys``) in its secrets file: keys are secrets, so they live
/// there beside the credential headers and in no other record. A file with keys is a JSON object
/// (`headers`, `key`, `keys`, `iv`, bytes as hex); one without is the header list alone, as before.
extension TaskSecrets {
    private struct Record: Codable {
        struct KeyForURI: Codable {
            var uri: String
            var key: String
        }
        var headers: [String]
        var key: String?
        var keys: [KeyForURI]?
        var iv: String?
    }

    /// The secrets file's bytes for `lines` and `keys`.
    static func encoded(_ lines: [String], keys: HLSUserKeys) -> Data {
        let encoder = JSONEncoder()
        guard !keys.isEmpty else { return (try? encoder.encode(lines)) ?? Data("[]".utf8) }
        let record = Record(
            headers: lines, key: keys.key.map(Hex.encode),
            keys: keys.keysByURI.isEmpty
                ? nil : keys.keysByURI.map { Record.KeyForURI(uri: $0.uri, key: Hex.encode($0.key)) },
            iv: keys.iv.map(Hex.encode))
        return (try? encoder.encode(record)) ?? Data("[]".utf8)
    }

    /// The header list and the user keys in a secrets file's bytes; `nil` when they do not decode.
    static func decoded(_ data: Data) -> (headers: [String], keys: HLSUserKeys)? {
        let decoder = JSONDecoder()
        if let lines = try? decoder.decode([String].self, from: data) { return (lines, HLSUserKeys()) }
        guard let record = try? decoder.decode(Record.self, from: data) else { return nil }
        let keys = HLSUserKeys(
            key: record.key.flatMap(Hex.decode),
            keysByURI: (record.keys ?? []).compactMap { entry in
                Hex.decode(entry.key).map { HLSUserKeys.KeyForURI(uri: entry.uri, key: $0) }
            },
            iv: record.iv.flatMap(Hex.decode))
        return (record.headers, keys)
    }

    /// The user keys of task `id`; none when it has no secrets file or the file holds none.
    static func readKeys(directory: URL, id: String) -> HLSUserKeys {
        guard let data = FileManager.default.contents(atPath: path(directory: directory, id: id)) else {
            return HLSUserKeys()
        }
        return decoded(data)?.keys ?? HLSUserKeys()
    }
}
