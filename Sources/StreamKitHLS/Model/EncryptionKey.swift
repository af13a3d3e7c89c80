import StreamKitCore

/// How media segments are encrypted: the `METHOD` of EXT-X-KEY (RFC 8216bis §4.4.4.4).
///
/// An open set: methods this version does not know are kept as written.
public struct EncryptionMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The value as written in the playlist.
    public let rawValue: String

    /// Creates a method from its playlist spelling.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `NONE`: segments are not encrypted.
    public static let noEncryption = EncryptionMethod(rawValue: "NONE")
    /// `AES-128`: whole segments encrypted with AES-128 CBC and PKCS#7 padding.
    public static let aes128 = EncryptionMethod(rawValue: "AES-128")
    /// `SAMPLE-AES`: media samples encrypted inside the container.
    public static let sampleAES = EncryptionMethod(rawValue: "SAMPLE-AES")
    /// `SAMPLE-AES-CTR`: samples encrypted with AES-CTR (common encryption, `cenc`).
    public static let sampleAESCTR = EncryptionMethod(rawValue: "SAMPLE-AES-CTR")

    /// The methods RFC 8216bis defines.
    public static let known: [EncryptionMethod] = [.noEncryption, .aes128, .sampleAES, .sampleAESCTR]

    public var description: String { rawValue }
}

/// EXT-X-KEY (RFC 8216bis §4.4.4.4) or EXT-X-SESSION-KEY (§4.4.6.5): how to decrypt the segments that follow.
public struct EncryptionKey: Hashable, Sendable {
    /// `METHOD`.
    public var method: EncryptionMethod
    /// `URI`: where the key is, as written (resolve it against the playlist URL).
    public var uri: String?
    /// `IV`: the 16-byte initialization vector, when written. Without it, AES-128 uses the media sequence number.
    public var iv: [UInt8]?
    /// `KEYFORMAT`, when written; `identity` when absent.
    public var keyFormat: String?
    /// `KEYFORMATVERSIONS`: slash-separated versions, such as `1/2/5`.
    public var keyFormatVersions: String?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a key.
    public init(
        method: EncryptionMethod, uri: String? = nil, iv: [UInt8]? = nil, keyFormat: String? = nil,
        keyFormatVersions: String? = nil, otherAttributes: [Attribute] = []
    ) {
        self.method = method
        self.uri = uri
        self.iv = iv
        self.keyFormat = keyFormat
        self.keyFormatVersions = keyFormatVersions
        self.otherAttributes = otherAttributes
    }

    /// The key format in effect: `KEYFORMAT`, or `identity` when absent.
    public var effectiveKeyFormat: String { keyFormat ?? "identity" }

    /// The IV for the segment with media sequence number `mediaSequence`: the explicit `IV`, or the sequence
    /// number as a 128-bit big-endian integer (RFC 8216bis §5.2).
    public func initializationVector(mediaSequence: UInt64) -> [UInt8] {
        iv ?? AES128CBC.iv(mediaSequence: mediaSequence)
    }
}

extension EncryptionKey: Codable {
    private enum CodingKeys: String, CodingKey {
        case method, uri, iv, keyFormat, keyFormatVersions, otherAttributes
    }

    /// Decodes a key; `iv` is hexadecimal text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(EncryptionMethod.self, forKey: .method)
        uri = try container.decodeIfPresent(String.self, forKey: .uri)
        if let hex = try container.decodeIfPresent(String.self, forKey: .iv) {
            guard let bytes = Hex.decode(hex) else {
                throw DecodingError.dataCorruptedError(forKey: .iv, in: container, debugDescription: "not hex")
            }
            iv = bytes
        }
        keyFormat = try container.decodeIfPresent(String.self, forKey: .keyFormat)
        keyFormatVersions = try container.decodeIfPresent(String.self, forKey: .keyFormatVersions)
        otherAttributes = try container.decodeIfPresent([Attribute].self, forKey: .otherAttributes) ?? []
    }

    /// Encodes the key with `iv` as `0x`-less lower-case hexadecimal.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encodeIfPresent(uri, forKey: .uri)
        try container.encodeIfPresent(iv.map { Hex.encode($0) }, forKey: .iv)
        try container.encodeIfPresent(keyFormat, forKey: .keyFormat)
        try container.encodeIfPresent(keyFormatVersions, forKey: .keyFormatVersions)
        if !otherAttributes.isEmpty { try container.encode(otherAttributes, forKey: .otherAttributes) }
    }
}

/// EXT-X-MAP (RFC 8216bis §4.4.4.5): the media initialization section (an fMP4 `init.mp4`, or a TS PAT/PMT)
/// needed to parse the segments that follow.
public struct MediaInitialization: Hashable, Sendable, Codable {
    /// `URI`, as written.
    public var uri: String
    /// `BYTERANGE`: the part of the resource holding the section (its offset is always written).
    public var byteRange: SegmentByteRange?
    /// Attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a map.
    public init(uri: String, byteRange: SegmentByteRange? = nil, otherAttributes: [Attribute] = []) {
        self.uri = uri
        self.byteRange = byteRange
        self.otherAttributes = otherAttributes
    }
}
