import StreamKitAMF
import StreamKitCore

/// A script data tag (§E.4.4 SCRIPTDATA): a name such as `onMetaData` and its AMF0 value.
public struct FLVScriptData: Hashable, Sendable {
    /// The name of the metadata call in files and in RTMP data messages.
    public static let onMetaData = "onMetaData"
    /// The prefix publishers put in front of `onMetaData` in RTMP data messages so that the server
    /// keeps it for new players (Adobe Media Server `@setDataFrame`); it is never written to a file.
    public static let setDataFrame = "@setDataFrame"

    /// The handler name, such as `onMetaData`.
    public var name: String
    /// The values after the name (for `onMetaData`, one ECMA array).
    public var values: [AMF0Value]

    public init(name: String, values: [AMF0Value]) {
        self.name = name
        self.values = values
    }

    /// `onMetaData` with the given properties as an ECMA array.
    public static func metadata(_ properties: AMF0Object) -> FLVScriptData {
        FLVScriptData(name: onMetaData, values: [.ecmaArray(properties)])
    }

    /// Decodes the AMF0 of a script tag or RTMP data message, dropping a leading `@setDataFrame`.
    ///
    /// - Throws: ``AMFError`` when the data is not AMF0 or does not start with a name.
    public init(data: some Sequence<UInt8>) throws(AMFError) {
        var values = try AMF0Decoder().decodeAll(data)
        if values.first?.stringValue == Self.setDataFrame { values.removeFirst() }
        guard let name = values.first?.stringValue else {
            throw .malformed("script data does not start with a name", offset: 0)
        }
        self.name = name
        self.values = Array(values.dropFirst())
    }

    /// The properties of `onMetaData` (its first value as an ECMA array or object).
    public var properties: AMF0Object? { values.first?.objectValue }

    /// The AMF0 bytes: the name as a string, then the values.
    public var data: [UInt8] { AMF0Encoder.encode([.string(name)] + values) }

    /// The AMF0 bytes a publisher sends: `@setDataFrame`, the name, then the values.
    public var setDataFrameData: [UInt8] { AMF0Encoder.encode([.string(Self.setDataFrame), .string(name)] + values) }
}
