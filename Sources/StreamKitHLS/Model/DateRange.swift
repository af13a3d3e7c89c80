import StreamKitCore

/// EXT-X-DATERANGE (RFC 8216bis §4.4.5.1): a range of time with attributes, such as an ad break or a
/// SCTE-35 splice.
public struct DateRange: Hashable, Sendable {
    /// `ID`: ranges with the same ID describe the same range (later tags add attributes).
    public var id: String
    /// `CLASS`.
    public var classValue: String?
    /// `START-DATE`. Absent only in a tag that updates a range announced earlier with the same ID.
    public var startDate: HLSDateTime?
    /// `CUE`: when to trigger it (`PRE`, `POST`, `ONCE`, comma-separated).
    public var cue: String?
    /// `END-DATE`.
    public var endDate: HLSDateTime?
    /// `DURATION` in seconds.
    public var duration: Double?
    /// `PLANNED-DURATION` in seconds.
    public var plannedDuration: Double?
    /// `END-ON-NEXT=YES`.
    public var endOnNext: Bool
    /// `SCTE35-CMD`: the splice_info_section bytes.
    public var scte35Command: [UInt8]?
    /// `SCTE35-OUT`.
    public var scte35Out: [UInt8]?
    /// `SCTE35-IN`.
    public var scte35In: [UInt8]?
    /// Client attributes (`X-…`) and any other attributes not listed above, as written.
    public var otherAttributes: [Attribute]

    /// Creates a date range.
    public init(
        id: String, classValue: String? = nil, startDate: HLSDateTime? = nil, cue: String? = nil,
        endDate: HLSDateTime? = nil, duration: Double? = nil, plannedDuration: Double? = nil, endOnNext: Bool = false,
        scte35Command: [UInt8]? = nil, scte35Out: [UInt8]? = nil, scte35In: [UInt8]? = nil,
        otherAttributes: [Attribute] = []
    ) {
        self.id = id
        self.classValue = classValue
        self.startDate = startDate
        self.cue = cue
        self.endDate = endDate
        self.duration = duration
        self.plannedDuration = plannedDuration
        self.endOnNext = endOnNext
        self.scte35Command = scte35Command
        self.scte35Out = scte35Out
        self.scte35In = scte35In
        self.otherAttributes = otherAttributes
    }
}

extension DateRange: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, classValue = "class", startDate, cue, endDate, duration, plannedDuration, endOnNext
        case scte35Command, scte35Out, scte35In, otherAttributes
    }

    /// Decodes a date range; SCTE-35 fields are hexadecimal text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func hex(_ key: CodingKeys) throws -> [UInt8]? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let bytes = Hex.decode(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not hex")
            }
            return bytes
        }
        id = try container.decode(String.self, forKey: .id)
        classValue = try container.decodeIfPresent(String.self, forKey: .classValue)
        startDate = try container.decodeIfPresent(HLSDateTime.self, forKey: .startDate)
        cue = try container.decodeIfPresent(String.self, forKey: .cue)
        endDate = try container.decodeIfPresent(HLSDateTime.self, forKey: .endDate)
        duration = try container.decodeIfPresent(Double.self, forKey: .duration)
        plannedDuration = try container.decodeIfPresent(Double.self, forKey: .plannedDuration)
        endOnNext = try container.decodeIfPresent(Bool.self, forKey: .endOnNext) ?? false
        scte35Command = try hex(.scte35Command)
        scte35Out = try hex(.scte35Out)
        scte35In = try hex(.scte35In)
        otherAttributes = try container.decodeIfPresent([Attribute].self, forKey: .otherAttributes) ?? []
    }

    /// Encodes the date range with SCTE-35 bytes as hexadecimal text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(classValue, forKey: .classValue)
        try container.encodeIfPresent(startDate, forKey: .startDate)
        try container.encodeIfPresent(cue, forKey: .cue)
        try container.encodeIfPresent(endDate, forKey: .endDate)
        try container.encodeIfPresent(duration, forKey: .duration)
        try container.encodeIfPresent(plannedDuration, forKey: .plannedDuration)
        if endOnNext { try container.encode(true, forKey: .endOnNext) }
        try container.encodeIfPresent(scte35Command.map { Hex.encode($0) }, forKey: .scte35Command)
        try container.encodeIfPresent(scte35Out.map { Hex.encode($0) }, forKey: .scte35Out)
        try container.encodeIfPresent(scte35In.map { Hex.encode($0) }, forKey: .scte35In)
        if !otherAttributes.isEmpty { try container.encode(otherAttributes, forKey: .otherAttributes) }
    }
}
