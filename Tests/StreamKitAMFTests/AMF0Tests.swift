import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitTestSupport
import Testing

/// Hand-built AMF0 byte vectors for every type (AMF0 specification §2), both directions.
@Suite struct AMF0Tests {
    private static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex.replacingOccurrences(of: " ", with: ""))! }

    /// Each value and its exact encoding.
    static let vectors: [(AMF0Value, String)] = [
        (.number(1.5), "00 3FF8000000000000"),
        (.number(-0.0), "00 8000000000000000"),
        (.boolean(true), "01 01"),
        (.boolean(false), "01 00"),
        (.string("hi"), "02 0002 6869"),
        (.string(""), "02 0000"),
        (.object(["a": 1, "b": .null]), "03 0001 61 00 3FF0000000000000 0001 62 05 0000 09"),
        (.object([:]), "03 0000 09"),
        (.null, "05"),
        (.undefined, "06"),
        (.ecmaArray(["duration": 0]), "08 00000001 0008 6475726174696F6E 00 0000000000000000 0000 09"),
        (.strictArray([1, "x"]), "0A 00000002 00 3FF0000000000000 02 0001 78"),
        (.date(millisecondsSince1970: 1_000, timeZone: 0), "0B 408F400000000000 0000"),
        (.longString("abc"), "0C 00000003 616263"),
        (.unsupported, "0D"),
        (.xmlDocument("<a/>"), "0F 00000004 3C612F3E"),
        (.typedObject(className: "C", ["k": true]), "10 0001 43 0001 6B 01 01 0000 09"),
        (.avmPlus(.integer(5)), "11 04 05"),
    ]

    @Test(arguments: 0..<vectors.count)
    func encodesAndDecodesEachType(_ index: Int) throws {
        let (value, hex) = Self.vectors[index]
        let expected = Self.bytes(hex)
        #expect(AMF0Encoder.encode([value]) == expected, "encoding \(value)")
        #expect(try AMF0Decoder().decodeAll(expected) == [value], "decoding \(hex)")
    }

    /// A reference (§2.9) points at an earlier object, ECMA array, strict array or typed object;
    /// the index counts them in the order they began, across one command message.
    @Test func referencesCountComplexValuesInOrder() throws {
        let values: [AMF0Value] = [.object(["inner": .strictArray([])]), .reference(1), .reference(0)]
        let encoded = AMF0Encoder.encode(values)
        #expect(try AMF0Decoder().decodeAll(encoded) == values)
        #expect(throws: AMFError.badReference(2, available: 2, offset: 0)) {
            try AMF0Decoder().decodeAll(AMF0Encoder.encode([.object([:]), .strictArray([]), .reference(2)]))
        }
        #expect(throws: AMFError.badReference(0, available: 0, offset: 0)) {
            try AMF0Decoder().decodeAll(Self.bytes("07 0000"))
        }
    }

    /// Every proper prefix of a value is "need more data" (nil, cursor unchanged); the whole is the value.
    @Test func dripFedValueNeedsEveryByte() throws {
        let value: AMF0Value = .object([
            "app": "live",
            "list": .strictArray([1, .longString("x"), .ecmaArray(["k": .date(millisecondsSince1970: 2, timeZone: 0)])]
            ),
            "typed": .typedObject(className: "T", ["x": .xmlDocument("<x/>")]),
        ])
        let encoded = AMF0Encoder.encode([value])
        for length in 0..<encoded.count {
            var buffer = ByteBuffer(bytes: encoded.prefix(length))
            #expect(try AMF0Decoder().decode(from: &buffer) == nil, "prefix of \(length) bytes")
            #expect(buffer.readableBytes == length)
        }
        var whole = ByteBuffer(bytes: encoded + [0x05])
        #expect(try AMF0Decoder().decode(from: &whole) == value)
        #expect(try AMF0Decoder().decode(from: &whole) == .null)
        #expect(whole.readableBytes == 0)
    }

    /// Every vector's value, one after another, decodes to the same values however the bytes
    /// arrive (``DecoderVerifier``): nil until a value is whole, never a wrong value.
    @Test func valuesAreTheSameHoweverTheInputIsSplit() {
        let values = Self.vectors.map(\.0)
        let encoded = AMF0Encoder.encode(values)
        let decoded = DecoderVerifier.verify(encoded) { pieces in
            var buffer = ByteBuffer()
            return DecoderOutcome<AMF0Value>.collecting { values in
                for piece in pieces {
                    buffer.writeBytes(piece)
                    while let value = try AMF0Decoder().decode(from: &buffer) { values.append(value) }
                }
            }
        }
        #expect(decoded == DecoderOutcome(values: values))
    }

    @Test func malformedInputFailsWithItsOffset() throws {
        #expect(throws: AMFError.unknownMarker(0x12, offset: 0)) { try AMF0Decoder().decodeAll([0x12]) }
        #expect(throws: AMFError.unsupportedType("movieclip (0x04)", offset: 0)) { try AMF0Decoder().decodeAll([0x04]) }
        #expect(throws: AMFError.unsupportedType("recordset (0x0E)", offset: 0)) { try AMF0Decoder().decodeAll([0x0E]) }
        #expect(throws: AMFError.malformed("", offset: 0)) { try AMF0Decoder().decodeAll([0x09]) }
        #expect(throws: AMFError.truncated(offset: 0)) { try AMF0Decoder().decodeAll(Self.bytes("02 0005 6869")) }
        do {
            _ = try AMF0Decoder().decodeAll(Self.bytes("05 05 42"))
            Issue.record("an unknown marker decoded")
        } catch {
            #expect(error.offset == 2 && error.description.contains("0x42"))
        }
    }

    /// Nesting past the limit fails instead of exhausting the stack.
    @Test func nestingIsLimited() throws {
        let deep = [UInt8](repeating: 0x0A, count: 1) + [0, 0, 0, 1]
        let bytes = Array((0..<100).map { _ in deep }.joined()) + [0x05]
        #expect(throws: AMFError.tooDeep(limit: 64, offset: 0)) { try AMF0Decoder().decodeAll(bytes) }
        #expect(try AMF0Decoder(maximumDepth: 200).decodeAll(bytes).count == 1)
    }

    /// A strict array announcing four billion elements must not reserve memory for them.
    @Test func hugeCountsDoNotAllocate() throws {
        var buffer = ByteBuffer(bytes: Self.bytes("0A FFFFFFFF 05"))
        #expect(try AMF0Decoder().decode(from: &buffer) == nil)
        #expect(throws: AMFError.truncated(offset: 0)) { try AMF0Decoder().decodeAll(Self.bytes("0A FFFFFFFF 05")) }
    }

    /// Text over 65,535 bytes cannot be a short string: it is written as a long string; names are cut.
    @Test func longTextBecomesALongString() throws {
        let text = String(repeating: "é", count: 40_000)  // 80,000 bytes of UTF-8
        let encoded = AMF0Encoder.encode([.string(text)])
        #expect(encoded.first == 0x0C)
        #expect(try AMF0Decoder().decodeAll(encoded) == [.longString(text)])
        let object = AMF0Encoder.encode([.object(AMF0Object([AMF0Property(name: text, value: .null)]))])
        let decoded = try AMF0Decoder().decodeAll(object)
        let name = try #require(decoded.first?.objectValue?.properties.first?.name)
        #expect(name.utf8.count == 65_534 && text.hasPrefix(name))
    }

    @Test func objectSubscriptKeepsOrder() {
        var object: AMF0Object = ["a": 1, "b": 2]
        object["a"] = 3
        object["c"] = 4
        object["b"] = nil
        #expect(object.properties.map(\.name) == ["a", "c"])
        #expect(object["a"] == 3 && object["b"] == nil)
    }
}
