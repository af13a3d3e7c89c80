import StreamKitAMF
import StreamKitFLV

/// Data messages (RTMP 1.0 §7.1.2) as FLV script data.
public enum RTMPDataMessage {
    /// The script data of an AMF0 (type 18) or AMF3 (type 15) data message, as AMF0.
    ///
    /// An AMF3 data message is either a format byte 0 and AMF0 values (which may switch to AMF3
    /// with the avmplus marker), or plain AMF3 values; AMF3 values are converted to their AMF0
    /// counterparts so that they can be written to an FLV file. A leading `@setDataFrame` is dropped.
    ///
    /// - Throws: ``RTMPError`` (malformed message) for bad AMF or a message without a name.
    public static func scriptData(from message: RTMPMessage) throws(RTMPError) -> FLVScriptData {
        do {
            var values: [AMF0Value]
            if message.type == .amf3Data, message.payload.first != 0 {
                values = try AMF3Decoder().decodeAll(message.payload).map(AMF0Value.init(amf3:))
            } else {
                let body = message.type == .amf3Data ? message.payload.dropFirst() : message.payload[...]
                values = try AMF0Decoder().decodeAll(body).map { value in
                    if case .avmPlus(let embedded) = value { return AMF0Value(amf3: embedded) }
                    return value
                }
            }
            if values.first?.stringValue == FLVScriptData.setDataFrame { values.removeFirst() }
            guard let name = values.first?.stringValue else {
                throw RTMPError.malformedMessage(
                    "data message on stream \(message.streamID) does not start with a name")
            }
            return FLVScriptData(name: name, values: Array(values.dropFirst()))
        } catch let error as AMFError {
            throw .malformedMessage("data message on stream \(message.streamID): \(error)")
        } catch let error as RTMPError {
            throw error
        } catch {
            throw .malformedMessage("data message on stream \(message.streamID): \(error)")
        }
    }
}

extension AMF0Value {
    /// The AMF0 counterpart of an AMF3 value: integers become numbers, arrays with named members
    /// ECMA arrays, objects (typed when they have a class name) objects; byte arrays and
    /// dictionaries, which AMF0 cannot express, become `unsupported`.
    public init(amf3 value: AMF3Value) {
        switch value {
        case .undefined: self = .undefined
        case .null: self = .null
        case .boolean(let flag): self = .boolean(flag)
        case .integer(let number): self = .number(Double(number))
        case .double(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .xmlDocument(let text), .xml(let text): self = .xmlDocument(text)
        case .date(let milliseconds): self = .date(millisecondsSince1970: milliseconds, timeZone: 0)
        case .array(let array):
            if array.associative.isEmpty {
                self = .strictArray(array.dense.map(AMF0Value.init(amf3:)))
            } else {
                var object = AMF0Object(
                    array.associative.map { AMF0Property(name: $0.name, value: AMF0Value(amf3: $0.value)) })
                for (index, element) in array.dense.enumerated() { object["\(index)"] = AMF0Value(amf3: element) }
                self = .ecmaArray(object)
            }
        case .object(let object):
            let properties = AMF0Object(
                (object.sealed + object.dynamic).map { AMF0Property(name: $0.name, value: AMF0Value(amf3: $0.value)) })
            self =
                object.className.isEmpty ? .object(properties) : .typedObject(className: object.className, properties)
        case .intVector(let elements, _): self = .strictArray(elements.map { .number(Double($0)) })
        case .uintVector(let elements, _): self = .strictArray(elements.map { .number(Double($0)) })
        case .doubleVector(let elements, _): self = .strictArray(elements.map { .number($0) })
        case .objectVector(_, let elements, _): self = .strictArray(elements.map(AMF0Value.init(amf3:)))
        case .byteArray, .dictionary: self = .unsupported
        }
    }
}
