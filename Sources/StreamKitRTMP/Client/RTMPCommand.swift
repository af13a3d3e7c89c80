import StreamKitAMF
import StreamKitCore

/// A command message (RTMP 1.0 §7.1.1, §7.2): a name, a transaction id, a command object and
/// further arguments, in AMF0 (type 20) or AMF3 (type 17, an AMF0 body after a format byte).
public struct RTMPCommand: Hashable, Sendable {
    public var name: String
    /// The transaction id: 0 for commands that expect no answer; answers repeat the request's id.
    public var transactionID: Double
    /// The command object (`null` when there is none).
    public var commandObject: AMF0Value
    /// Any further arguments.
    public var arguments: [AMF0Value]

    public init(name: String, transactionID: Double, commandObject: AMF0Value = .null, arguments: [AMF0Value] = []) {
        self.name = name
        self.transactionID = transactionID
        self.commandObject = commandObject
        self.arguments = arguments
    }

    /// Decodes a command message.
    ///
    /// - Throws: ``RTMPError`` (malformed message) for bad AMF or a body without a name and transaction id.
    public init(message: RTMPMessage) throws(RTMPError) {
        var body = message.payload[...]
        if message.type == .amf3Command, body.first == 0 { body = body.dropFirst() }
        let values: [AMF0Value]
        do {
            values = try AMF0Decoder().decodeAll(body)
        } catch {
            throw .malformedMessage("command message on stream \(message.streamID): \(error)")
        }
        guard let name = values.first?.stringValue else {
            throw .malformedMessage("command message on stream \(message.streamID) does not start with a name")
        }
        self.name = name
        transactionID = values.count > 1 ? (values[1].numberValue ?? 0) : 0
        commandObject = values.count > 2 ? values[2] : .null
        arguments = Array(values.dropFirst(3))
    }

    /// The AMF0 command message on message stream `streamID`.
    public func message(streamID: UInt32 = 0) -> RTMPMessage {
        RTMPMessage(
            type: .amf0Command, streamID: streamID,
            payload: AMF0Encoder.encode([.string(name), .number(transactionID), commandObject] + arguments))
    }

    // MARK: Client commands (§7.2.1, §7.2.2)

    /// `connect` to the application of `url` (§7.2.1.1), announcing `enhancedCodecs` (nothing when empty).
    public static func connect(
        transactionID: Double, url: RTMPURL, forPublishing: Bool, enhancedCodecs: EnhancedCodecs = .none
    ) -> RTMPCommand {
        var object: AMF0Object = [
            "app": .string(url.application),
            "flashVer": .string(forPublishing ? "FMLE/3.0 (compatible; StreamKit)" : "LNX 9,0,124,2"),
            "tcUrl": .string(url.tcURL),
        ]
        if forPublishing {
            object["type"] = "nonprivate"
        } else {
            object["fpad"] = false
            object["capabilities"] = 15
            object["audioCodecs"] = 3575
            object["videoCodecs"] = 252
            object["videoFunction"] = 1
        }
        object["objectEncoding"] = 0
        enhancedCodecs.addConnectProperties(to: &object, forPublishing: forPublishing)
        return RTMPCommand(name: "connect", transactionID: transactionID, commandObject: .object(object))
    }

    /// `createStream` (§7.2.1.3).
    public static func createStream(transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "createStream", transactionID: transactionID)
    }

    /// `releaseStream`, sent before publishing by Flash Media Live Encoder and ffmpeg; servers may ignore it.
    public static func releaseStream(transactionID: Double, stream: String) -> RTMPCommand {
        RTMPCommand(name: "releaseStream", transactionID: transactionID, arguments: [.string(stream)])
    }

    /// `FCPublish`, announcing a publish to servers that track it; no answer is awaited.
    public static func fcPublish(transactionID: Double, stream: String) -> RTMPCommand {
        RTMPCommand(name: "FCPublish", transactionID: transactionID, arguments: [.string(stream)])
    }

    /// `FCUnpublish`, the counterpart of ``fcPublish(transactionID:stream:)``; no answer is awaited.
    public static func fcUnpublish(transactionID: Double, stream: String) -> RTMPCommand {
        RTMPCommand(name: "FCUnpublish", transactionID: transactionID, arguments: [.string(stream)])
    }

    /// `publish` (§7.2.2.6) with a publishing type (`live`, `record`, `append`).
    public static func publish(stream: String, type: String = "live") -> RTMPCommand {
        RTMPCommand(name: "publish", transactionID: 0, arguments: [.string(stream), .string(type)])
    }

    /// `play` (§7.2.2.1); `start` -2 plays a live stream, or the recorded one if there is no live one.
    public static func play(stream: String, start: Double = -2) -> RTMPCommand {
        RTMPCommand(name: "play", transactionID: 0, arguments: [.string(stream), .number(start)])
    }

    /// `deleteStream` (§7.2.2.3).
    public static func deleteStream(transactionID: Double, streamID: UInt32) -> RTMPCommand {
        RTMPCommand(name: "deleteStream", transactionID: transactionID, arguments: [.number(Double(streamID))])
    }
}

/// The information object of an `onStatus` command or of a `_result`/`_error` answer (§7.2.2).
public struct RTMPStatus: Hashable, Sendable, CustomStringConvertible {
    /// `status`, `warning` or `error`.
    public var level: String
    /// `NetStream.Play.Start`, `NetConnection.Connect.Rejected`, ...
    public var code: String
    /// The server's text.
    public var description: String
    /// Every property the server sent.
    public var info: AMF0Object

    public init(level: String, code: String, description: String = "", info: AMF0Object = AMF0Object()) {
        self.level = level
        self.code = code
        self.description = description
        self.info = info
    }

    /// The status in the first object among `values`, if any of them is an object with a `code`.
    public init?(_ values: [AMF0Value]) {
        for value in values {
            if let object = value.objectValue, let code = object["code"]?.stringValue {
                level = object["level"]?.stringValue ?? ""
                self.code = code
                description = object["description"]?.stringValue ?? ""
                info = object
                return
            }
        }
        return nil
    }

    /// Whether the server reports a failure.
    public var isError: Bool { level == "error" || code.hasSuffix(".Failed") || code.hasSuffix(".Rejected") }
}
