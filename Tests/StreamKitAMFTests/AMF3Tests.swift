import Foundation
import StreamKitAMF
import StreamKitCore
import StreamKitTestSupport
import Testing

/// AMF3 decoding (AMF3 specification §3) from hand-built bytes, references included.
@Suite struct AMF3Tests {
    private static func decode(_ hex: String) throws -> [AMF3Value] {
        try AMF3Decoder().decodeAll(Hex.decode(hex.replacingOccurrences(of: " ", with: ""))!)
    }

    @Test func scalars() throws {
        #expect(try Self.decode("00 01 02 03") == [.undefined, .null, .boolean(false), .boolean(true)])
        #expect(try Self.decode("05 3FF8000000000000") == [.double(1.5)])
        #expect(try Self.decode("08 01 408F400000000000") == [.date(millisecondsSince1970: 1_000)])
    }

    /// U29 in one to four bytes, and 29-bit sign extension (§1.3.1, §3.6).
    @Test func integersUseU29() throws {
        #expect(try Self.decode("04 7F") == [.integer(127)])
        #expect(try Self.decode("04 8100") == [.integer(128)])
        #expect(try Self.decode("04 FF7F") == [.integer(16_383)])
        #expect(try Self.decode("04 818000") == [.integer(16_384)])
        #expect(try Self.decode("04 BFFFFFFF") == [.integer(0x0FFF_FFFF)])
        #expect(try Self.decode("04 FFFFFFFF") == [.integer(-1)])
        #expect(try Self.decode("04 C0808000") == [.integer(-0x1000_0000)])
    }

    /// Strings are kept in a table and repeated by reference; the empty string never is (§3.8).
    @Test func stringReferences() throws {
        #expect(try Self.decode("06 07 616263 06 01 06 00") == [.string("abc"), .string(""), .string("abc")])
        #expect(throws: AMFError.badReference(1, available: 1, offset: 0)) { try Self.decode("06 07 616263 06 02") }
    }

    /// An array with named members and dense elements, then a reference to it (§3.11).
    @Test func arraysAndObjectReferences() throws {
        let values = try Self.decode("09 05 03 6B 04 01 01 04 02 04 03 09 00")
        let array = AMF3Value.array(
            AMF3Array(associative: [AMF3Member(name: "k", value: .integer(1))], dense: [.integer(2), .integer(3)]))
        #expect(values == [array, array])
    }

    /// Inline traits, a traits reference, an object reference, dynamic members (§3.12).
    @Test func objectsWithTraits() throws {
        // Object 0: sealed class "P" with member "x", not dynamic: U29O = 0b0001_0011.
        // Object 1: traits reference 0 (U29O = 0b0000_0001), x = 2.
        // Object 2: reference to object 0 (U29O = 0b0000_0000).
        // Object 3: anonymous dynamic object with "d" = true: U29O = 0b0000_1011.
        let values = try Self.decode("0A 13 03 50 03 78 04 01  0A 01 04 02  0A 00  0A 0B 01 03 64 03 01")
        let first = AMF3Value.object(
            AMF3Object(className: "P", sealed: [AMF3Member(name: "x", value: .integer(1))], isDynamic: false))
        let second = AMF3Value.object(
            AMF3Object(className: "P", sealed: [AMF3Member(name: "x", value: .integer(2))], isDynamic: false))
        let dynamic = AMF3Value.object(
            AMF3Object(className: "", isDynamic: true, dynamic: [AMF3Member(name: "d", value: .boolean(true))]))
        #expect(values == [first, second, first, dynamic])
        if case .object(let object) = dynamic { #expect(object["d"] == .boolean(true)) }
    }

    @Test func xmlByteArraysVectorsAndDictionaries() throws {
        #expect(try Self.decode("07 09 3C612F3E") == [.xmlDocument("<a/>")])
        #expect(try Self.decode("0B 09 3C622F3E") == [.xml("<b/>")])
        #expect(try Self.decode("0C 07 010203  0C 00") == [.byteArray([1, 2, 3]), .byteArray([1, 2, 3])])
        #expect(try Self.decode("0D 05 00 FFFFFFFF 00000002") == [.intVector([-1, 2], fixed: false)])
        #expect(try Self.decode("0E 03 01 FFFFFFFF") == [.uintVector([0xFFFF_FFFF], fixed: true)])
        #expect(try Self.decode("0F 03 00 3FF0000000000000") == [.doubleVector([1], fixed: false)])
        #expect(try Self.decode("10 03 00 03 54 04 07") == [.objectVector(typeName: "T", [.integer(7)], fixed: false)])
        let dictionary = AMF3Dictionary(hasWeakKeys: false, entries: [.init(key: .string("k"), value: .null)])
        #expect(try Self.decode("11 03 00 06 03 6B 01") == [.dictionary(dictionary)])
    }

    /// A member that refers to the object holding it is a cycle value types cannot hold.
    @Test func cyclesAreRejected() throws {
        #expect(throws: AMFError.badReference(0, available: 1, offset: 0)) {
            try Self.decode("09 01 03 61 09 00 01")
        }
    }

    @Test func externalizableObjectsAreUnsupported() throws {
        #expect(throws: AMFError.unsupportedType("", offset: 0)) { try Self.decode("0A 07 03 45") }
    }

    /// References can repeat a value many times; the node budget stops an exponential tree.
    @Test func referenceExpansionIsBounded() throws {
        // Array 0 = [1, 1]; array k = [ref k-1, ref k-1]: 2^40 leaves from a few dozen bytes.
        var hex = "09 05 01 04 01 04 01"
        for level in 0..<40 {
            hex += " 09 05 01 09 \(String(format: "%02X", level << 1)) 09 \(String(format: "%02X", level << 1))"
        }
        #expect(throws: AMFError.tooLarge("", offset: 0)) { try Self.decode(hex) }
    }

    @Test func unknownMarkersAndTruncation() throws {
        #expect(throws: AMFError.unknownMarker(0x12, offset: 0, version: 3)) { try Self.decode("12") }
        #expect(throws: AMFError.truncated(offset: 0)) { try Self.decode("06 09 61") }
        var buffer = ByteBuffer(bytes: [0x0C, 0x7F, 0x00])
        #expect(try AMF3Decoder().decode(from: &buffer) == nil)
        #expect(buffer.readableBytes == 3)
    }

    /// Self-contained values one after another decode alike however the bytes arrive
    /// (``DecoderVerifier``), and a truncated last value is "need more", not an error.
    @Test func valuesAreTheSameHoweverTheInputIsSplit() throws {
        let hex =
            "00 01 02 03 05 3FF8000000000000 04 FFFFFFFF 06 07 616263 0C 07 010203 0E 03 01 FFFFFFFF 11 03 00 06 03 6B 01"
        let input = Hex.decode(hex.replacingOccurrences(of: " ", with: ""))!
        let expected = try AMF3Decoder().decodeAll(input)
        #expect(expected.count == 10)
        let decoded = DecoderVerifier.verify(input + [0x0C, 0x7F]) { pieces in
            var buffer = ByteBuffer()
            return DecoderOutcome<AMF3Value>.collecting { values in
                for piece in pieces {
                    buffer.writeBytes(piece)
                    while let value = try AMF3Decoder().decode(from: &buffer) { values.append(value) }
                }
            }
        }
        #expect(decoded == DecoderOutcome(values: expected))
    }

    /// What the encoder writes decodes to the same value.
    @Test func encoderRoundTrips() throws {
        let value = AMF3Value.object(
            AMF3Object(
                className: "", isDynamic: true,
                dynamic: [
                    AMF3Member(name: "n", value: .integer(-5)), AMF3Member(name: "big", value: .integer(0x0FFF_FFFF)),
                    AMF3Member(name: "s", value: .string("n")),
                    AMF3Member(
                        name: "a",
                        value: .array(
                            AMF3Array(
                                associative: [AMF3Member(name: "s", value: .double(2))], dense: [.null, .xml("<x/>")]))),
                    AMF3Member(
                        name: "v", value: .objectVector(typeName: "", [.date(millisecondsSince1970: 5)], fixed: true)),
                    AMF3Member(name: "b", value: .byteArray([9, 8])),
                    AMF3Member(
                        name: "d",
                        value: .dictionary(
                            AMF3Dictionary(hasWeakKeys: true, entries: [.init(key: .integer(1), value: .undefined)]))),
                ]))
        var buffer = ByteBuffer()
        var encoder = AMF3Encoder()
        encoder.encode(value, into: &buffer)
        encoder.encode(.string("n"), into: &buffer)
        #expect(try AMF3Decoder().decodeAll(buffer.readableBytesView) == [value, .string("n")])
    }
}
