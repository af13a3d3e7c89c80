import Foundation
import StreamKitCore
import StreamKitDownloads

/// `--key HEX`, `--key-file URI=FILE` or `URI=HEX` (repeatable), `--iv HEX`: AES-128 keys the user
/// gives for an HLS download, for streams whose key server needs a browser session. Keys given
/// this way are never fetched.
struct KeyOptions: ParsableArguments {
    @Option(
        valueName: "hex",
        help: "HLS: one AES-128 key (32 hex digits) for every key URI; no key is then fetched.")
    var key: HexBlock?
    @Option(
        valueName: "uri=file",
        help:
            "HLS: the key of one key URI (absolute, or as the media playlist writes it), never fetched: "
            + "URI=FILE (16 bytes or 32 hex digits) or URI=HEX. Repeatable.")
    var keyFile: [KeyFileArgument] = []
    @Option(valueName: "hex", help: "HLS: the IV (32 hex digits) of every AES-128 key, for a wrong or missing IV.")
    var iv: HexBlock?

    init() {}

    mutating func validate() throws { _ = try userKeys() }

    /// The keys and IV given, with the key files read.
    ///
    /// - Throws: ``ValidationError`` naming a key file that cannot be read or holds no key.
    func userKeys() throws -> HLSUserKeys {
        var keysByURI: [HLSUserKeys.KeyForURI] = []
        for argument in keyFile {
            switch argument.source {
            case .hex(let bytes):
                keysByURI.append(HLSUserKeys.KeyForURI(uri: argument.uri, key: bytes))
            case .file(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("--key-file \(argument.uri)=\(path): cannot read \(path)")
                }
                guard let key = KeyFileArgument.key(fromFileContents: Array(data)) else {
                    throw ValidationError(
                        "--key-file \(argument.uri)=\(path): \(path) holds \(data.count) bytes, not a key "
                            + "(16 bytes, or 32 hexadecimal digits)")
                }
                keysByURI.append(HLSUserKeys.KeyForURI(uri: argument.uri, key: key))
            }
        }
        return HLSUserKeys(key: key?.bytes, keysByURI: keysByURI, iv: iv?.bytes)
    }
}

/// 16 bytes written as 32 hexadecimal digits (an optional `0x` first): an AES-128 key or IV.
struct HexBlock: Hashable, Sendable, ExpressibleByArgument {
    let bytes: [UInt8]

    init?(argument: String) {
        guard Self.problem(argument) == nil, let bytes = Hex.decode(argument) else { return nil }
        self.bytes = bytes
    }

    /// Why `text` is not 16 bytes in hexadecimal, or `nil` when it is.
    static func problem(_ text: String) -> String? {
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isHexDigit) else { return "it is not hexadecimal" }
        guard digits.count == 32 else { return "got \(digits.count) digits (\(digits.count / 2) bytes)" }
        return nil
    }

    static var valueDescription: String { "32 hexadecimal digits" }

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be 32 hexadecimal digits (16 bytes, AES-128), " + (problem(argument) ?? "got '\(argument)'")
    }
}

/// `URI=FILE` or `URI=HEX` of `--key-file`, split at the last `=` (a URI may hold `=` in its
/// query). A value of hexadecimal digits only is the key itself; anything else names a file.
struct KeyFileArgument: Hashable, Sendable, ExpressibleByArgument {
    /// Where the key comes from.
    enum Source: Hashable, Sendable {
        case hex([UInt8])
        case file(String)
    }

    let uri: String
    let source: Source

    init?(argument: String) {
        guard Self.problem(argument) == nil, let (uri, value) = Self.split(argument) else { return nil }
        self.uri = uri
        if Self.isHexDigits(value), let bytes = Hex.decode(value) {
            source = .hex(bytes)
        } else {
            source = .file(value)
        }
    }

    /// Why `text` is not `URI=FILE` or `URI=HEX`, or `nil` when it is.
    static func problem(_ text: String) -> String? {
        guard let (uri, value) = split(text), !uri.isEmpty, !value.isEmpty else {
            return "got '\(text)'"
        }
        if isHexDigits(value), let problem = HexBlock.problem(value) {
            return "the key of \(uri) must be 32 hexadecimal digits (16 bytes, AES-128): \(problem)"
        }
        return nil
    }

    /// The URI and the value of `text`, split at its last `=`.
    private static func split(_ text: String) -> (String, String)? {
        guard let equals = text.lastIndex(of: "=") else { return nil }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// Whether `value` is hexadecimal digits only (an optional `0x` first): a key, not a file name.
    private static func isHexDigits(_ value: String) -> Bool {
        let digits = value.hasPrefix("0x") || value.hasPrefix("0X") ? value.dropFirst(2) : Substring(value)
        return !digits.isEmpty && digits.allSatisfy(\.isHexDigit)
    }

    /// The key a key file holds: 16 raw bytes, or 32 hexadecimal digits (whitespace around them
    /// allowed); `nil` for anything else.
    static func key(fromFileContents bytes: [UInt8]) -> [UInt8]? {
        if bytes.count == 16 { return bytes }
        guard let text = String(bytes: bytes, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            HexBlock.problem(text) == nil
        else { return nil }
        return Hex.decode(text)
    }

    static var valueDescription: String { "URI=FILE or URI=HEX" }

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        let problem = problem(argument) ?? "got '\(argument)'"
        return "\(name) must be URI=FILE or URI=HEX" + (problem.hasPrefix("got") ? ", " : ": ") + problem
    }
}
