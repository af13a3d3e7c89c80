/// The wire formats of ``StrictRTMPServer``, written apart from StreamKit's own RTMP code so that
/// the server is a second, independent reading of the protocol: AMF0 with only the types RTMP
/// servers of the Flash era knew, and the chunk stream.

/// An AMF0 value of the types a strict, pre-Enhanced-RTMP server decodes.
public enum StrictAMFValue: Sendable {
    case number(Double)
    case boolean(Bool)
    case string(String)
    case object([(String, StrictAMFValue)])
    case null
    case undefined

    /// The keys of an object, in order.
    public var keys: [String] {
        if case .object(let properties) = self { properties.map(\.0) } else { [] }
    }

    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    public var number: Double? {
        if case .number(let value) = self { value } else { nil }
    }
}

/// Why a strict decoder gave up.
public struct StrictAMFError: Error, Hashable, CustomStringConvertible {
    public let description: String
}

/// Decodes AMF0 markers 0 number, 1 boolean, 2 string, 3 object, 5 null, 6 undefined and
/// 8 ECMA array (read as an object); any other marker (a strict array, a date, a long string,
/// AMF3) is an error, as it is in servers that predate those uses.
public struct StrictAMFDecoder {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset >= bytes.count }

    public mutating func decodeAll() throws(StrictAMFError) -> [StrictAMFValue] {
        var values: [StrictAMFValue] = []
        while !isAtEnd { values.append(try value()) }
        return values
    }

    private mutating func take(_ count: Int) throws(StrictAMFError) -> ArraySlice<UInt8> {
        guard offset + count <= bytes.count else { throw StrictAMFError(description: "AMF0 value runs past the end") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    private mutating func integer(_ count: Int) throws(StrictAMFError) -> UInt64 {
        try take(count).reduce(0) { $0 << 8 | UInt64($1) }
    }

    private mutating func shortString() throws(StrictAMFError) -> String {
        let length = Int(try integer(2))
        return String(decoding: try take(length), as: UTF8.self)
    }

    private mutating func properties() throws(StrictAMFError) -> [(String, StrictAMFValue)] {
        var properties: [(String, StrictAMFValue)] = []
        while true {
            let name = try shortString()
            if name.isEmpty && offset < bytes.count && bytes[offset] == 9 {
                offset += 1
                return properties
            }
            properties.append((name, try value()))
        }
    }

    private mutating func value() throws(StrictAMFError) -> StrictAMFValue {
        let marker = try take(1).first!
        switch marker {
        case 0: return .number(Double(bitPattern: try integer(8)))
        case 1: return .boolean(try take(1).first! != 0)
        case 2: return .string(try shortString())
        case 3: return .object(try properties())
        case 5: return .null
        case 6: return .undefined
        case 8:
            _ = try take(4)
            return .object(try properties())
        default:
            throw StrictAMFError(description: "unknown AMF0 type marker \(marker) at byte \(offset - 1)")
        }
    }
}

/// Encodes the few values a server answers with.
enum StrictAMFEncoder {
    static func encode(_ values: [StrictAMFValue]) -> [UInt8] {
        var out: [UInt8] = []
        for value in values { append(value, to: &out) }
        return out
    }

    private static func appendShortString(_ text: String, to out: inout [UInt8]) {
        let utf8 = Array(text.utf8)
        out += [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)] + utf8
    }

    private static func append(_ value: StrictAMFValue, to out: inout [UInt8]) {
        switch value {
        case .number(let number):
            out.append(0)
            out += (0..<8).map { UInt8(truncatingIfNeeded: number.bitPattern >> (56 - 8 * $0)) }
        case .boolean(let flag): out += [1, flag ? 1 : 0]
        case .string(let text):
            out.append(2)
            appendShortString(text, to: &out)
        case .object(let properties):
            out.append(3)
            for (name, property) in properties {
                appendShortString(name, to: &out)
                append(property, to: &out)
            }
            out += [0, 0, 9]
        case .null: out.append(5)
        case .undefined: out.append(6)
        }
    }
}

/// One message the server read off the chunk stream.
struct StrictRTMPMessage {
    var type: UInt8
    var streamID: UInt32
    var timestamp: UInt32
    var payload: [UInt8]
}

/// Reassembles messages from chunks (RTMP 1.0 §5.3), following Set Chunk Size.
struct StrictChunkReader {
    private struct StreamState {
        var timestamp: UInt32 = 0
        var delta: UInt32 = 0
        var length = 0
        var type: UInt8 = 0
        var streamID: UInt32 = 0
        var extended = false
        var partial: [UInt8] = []
    }

    private var chunkSize = 128
    private var streams: [UInt32: StreamState] = [:]

    /// What one chunk gave.
    enum Outcome {
        /// The peer closed the connection.
        case closed
        /// Part of a message.
        case incomplete
        case message(StrictRTMPMessage)
    }

    /// Reads one chunk with `read(count)` (`nil` when the peer closed).
    mutating func readChunk(_ read: (Int) -> [UInt8]?) -> Outcome {
        guard let first = read(1)?.first else { return .closed }
        let format = first >> 6
        var chunkStream = UInt32(first & 0x3F)
        if chunkStream == 0 {
            guard let byte = read(1) else { return .closed }
            chunkStream = 64 + UInt32(byte[0])
        } else if chunkStream == 1 {
            guard let two = read(2) else { return .closed }
            chunkStream = 64 + UInt32(two[0]) + UInt32(two[1]) << 8
        }
        var state = streams[chunkStream] ?? StreamState()
        func big(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.reduce(0) { $0 << 8 | UInt32($1) } }
        let headerSize = [11, 7, 3, 0][Int(format)]
        guard let header = read(headerSize) else { return .closed }
        var stamp: UInt32 = 0
        if format <= 2 { stamp = big(header[0..<3]) }
        if format <= 1 {
            state.length = Int(big(header[3..<6]))
            state.type = header[6]
        }
        if format == 0 { state.streamID = header[7..<11].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        if format <= 2 { state.extended = stamp == 0xFF_FFFF }
        if state.extended {
            guard let extended = read(4) else { return .closed }
            stamp = big(extended[...])
        }
        if state.partial.isEmpty {
            switch format {
            case 0: state.timestamp = stamp
            case 1, 2:
                state.delta = stamp
                state.timestamp &+= stamp
            default: state.timestamp &+= state.delta
            }
        }
        let count = min(chunkSize, state.length - state.partial.count)
        guard let body = read(count) else { return .closed }
        state.partial += body
        guard state.partial.count >= state.length else {
            streams[chunkStream] = state
            return .incomplete
        }
        let message = StrictRTMPMessage(
            type: state.type, streamID: state.streamID, timestamp: state.timestamp, payload: state.partial)
        state.partial = []
        streams[chunkStream] = state
        if message.type == 1, message.payload.count >= 4 {
            chunkSize = max(1, Int(big(message.payload[0..<4]) & 0x7FFF_FFFF))
        }
        return .message(message)
    }

    /// `payload` as a type-0 chunk and type-3 continuations of `chunkSize` bytes on chunk stream
    /// `chunkStream`, with an Extended Timestamp (on every chunk) from 0xFFFFFF on.
    static func chunks(
        type: UInt8, streamID: UInt32, chunkStream: UInt8, payload: [UInt8], timestamp: UInt32 = 0,
        chunkSize: Int = 128
    ) -> [UInt8] {
        let length = payload.count
        let extended = timestamp >= 0xFF_FFFF
        let stamp = extended ? 0xFF_FFFF : timestamp
        func bigEndian(_ value: UInt32, _ count: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32(count - 1 - $0))) }
        }
        var out: [UInt8] = [chunkStream] + bigEndian(stamp, 3) + bigEndian(UInt32(length), 3) + [type]
        out += (0..<4).map { UInt8(truncatingIfNeeded: streamID >> (8 * $0)) }
        if extended { out += bigEndian(timestamp, 4) }
        var offset = 0
        while offset < length {
            if offset > 0 {
                out.append(0xC0 | chunkStream)
                if extended { out += bigEndian(timestamp, 4) }
            }
            let end = min(offset + chunkSize, length)
            out += payload[offset..<end]
            offset = end
        }
        return out
    }
}
