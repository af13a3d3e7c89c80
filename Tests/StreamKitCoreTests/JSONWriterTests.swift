import Foundation
import StreamKitCore
import Testing

@Suite struct JSONWriterTests {
    /// The chunks a writer hands out.
    private final class Chunks: @unchecked Sendable {
        var list: [[UInt8]] = []
        var text: String { String(decoding: list.joined(), as: UTF8.self) }
    }

    private func write(chunkSize: Int = 65_536, _ body: (inout JSONWriter) throws -> Void) rethrows -> Chunks {
        let chunks = Chunks()
        var writer = JSONWriter(chunkSize: chunkSize) { chunks.list.append($0) }
        try body(&writer)
        writer.flush()
        return chunks
    }

    private func parse(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    @Test func escapesQuotesBackslashesAndControlCharactersOnly() throws {
        let original = "a\"b\\c/d\n\r\t\u{8}\u{C}\u{0}\u{1}\u{1F} \u{7F}é€😀"
        let text = write { $0.string(original) }.text
        #expect(text == #""a\"b\\c/d\n\r\t\b\f\u0000\u0001\u001f "# + "\u{7F}é€😀\"")
        #expect(try parse(text) as? String == original)
        #expect(write { $0.string("") }.text == #""""#)
        // Each character that needs escaping, at every position of a run read eight bytes at a time.
        for (special, escaped) in [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{1}", #"\u0001"#)] {
            for position in 0..<20 {
                let value = String(repeating: "a", count: position) + special + "é" + String(repeating: "b", count: 9)
                let text = write { $0.string(value) }.text
                #expect(
                    text == "\"" + String(repeating: "a", count: position) + escaped + "é"
                        + String(repeating: "b", count: 9)
                        + "\"")
                #expect(try parse(text) as? String == value)
            }
        }
        // Keys are escaped the same way.
        let object = write { writer in
            writer.beginObject()
            writer.field("plain", "x")
            writer.key(string: "quote\"d\nkey")
            writer.integer(1)
            writer.endObject()
        }.text
        #expect(object == #"{"plain":"x","quote\"d\nkey":1}"#)
        #expect((try parse(object) as? [String: Any])?["quote\"d\nkey"] as? Int == 1)
    }

    @Test func writesIntegersAndShortestRoundTripDoubles() throws {
        let integers = write { writer in
            writer.beginArray()
            writer.integer(0)
            writer.integer(7)
            writer.integer(-1)
            writer.integer(Int64.min)
            writer.integer(UInt64.max)
            writer.integer(Int8(-128))
            writer.endArray()
        }.text
        #expect(integers == "[0,7,-1,-9223372036854775808,18446744073709551615,-128]")
        let doubles = write { writer in
            writer.beginArray()
            for value in [1.5, 4.0, 0.1, 6.006, -2.25, 1e-7, 1e300, 1e16, 0.0, -0.0, 123_456_789.0] {
                writer.double(value)
            }
            writer.double(.nan)
            writer.double(.infinity)
            writer.float(0.1)
            writer.float(2)
            writer.endArray()
        }.text
        #expect(doubles == "[1.5,4,0.1,6.006,-2.25,1e-07,1e+300,1e+16,0,-0,123456789,null,null,0.1,2]")
        #expect((try parse(doubles) as? [Any])?.count == 15)
        // Every double reads back as itself (checked with Double(_:): JSONSerialization on Linux reads
        // some of them a unit in the last place off).
        var random = SplitMix64(seed: 20)
        var values: [Double] = [.leastNonzeroMagnitude, .greatestFiniteMagnitude, .ulpOfOne, 0.1 + 0.2, 600_599.4]
        for _ in 0..<2_000 {
            values.append(Double(bitPattern: random.next() & ~(0x7FF << 52) | (random.next() % 0x7FE) << 52))
        }
        for value in values {
            let text = write { $0.double(value) }.text
            #expect(Double(text) == value, "\(text)")
        }
        let array = write { writer in
            writer.beginArray()
            for value in values { writer.double(value) }
            writer.endArray()
        }.text
        #expect((try parse(array) as? [NSNumber])?.count == values.count)
    }

    @Test func nestsObjectsAndArraysWithCommasWhereTheyBelong() {
        let text = write { writer in
            writer.beginObject()
            writer.key("empty")
            writer.beginObject()
            writer.endObject()
            writer.key("none")
            writer.beginArray()
            writer.endArray()
            writer.key("list")
            writer.beginArray()
            writer.beginObject()
            writer.field("a", 1)
            writer.field("b", true)
            writer.endObject()
            writer.beginArray()
            writer.null()
            writer.bool(false)
            writer.beginArray()
            writer.endArray()
            writer.endArray()
            writer.hexString([0x00, 0xAB, 0x10, 0xFF])
            writer.endArray()
            writer.field("last", 2.5)
            writer.endObject()
        }.text
        #expect(text == #"{"empty":{},"none":[],"list":[{"a":1,"b":true},[null,false,[]],"00ab10ff"],"last":2.5}"#)
        // A value written once and copied where it repeats.
        let repeated = JSONWriter.bytes { writer in
            writer.beginObject()
            writer.field("uri", "k\"1")
            writer.endObject()
        }
        #expect(String(decoding: repeated, as: UTF8.self) == #"{"uri":"k\"1"}"#)
        let copies = write { writer in
            writer.beginArray()
            writer.json(repeated)
            writer.integer(3)
            writer.json(repeated)
            writer.endArray()
        }.text
        #expect(copies == #"[{"uri":"k\"1"},3,{"uri":"k\"1"}]"#)
    }

    @Test func handsOutChunksThatEndBetweenTokens() throws {
        let chunks = write(chunkSize: 64) { writer in
            writer.beginArray()
            for index in 0..<500 {
                writer.beginObject()
                writer.field("name", "é€😀 \(index)")
                writer.field("value", Double(index) / 8)
                writer.endObject()
            }
            writer.endArray()
        }
        #expect(chunks.list.count > 100)
        for chunk in chunks.list.dropLast() {
            #expect(chunk.count >= 64 && chunk.count < 64 + 40)
            #expect(String(validating: chunk, as: UTF8.self) != nil)
        }
        let whole = write { writer in
            writer.beginArray()
            for index in 0..<500 {
                writer.beginObject()
                writer.field("name", "é€😀 \(index)")
                writer.field("value", Double(index) / 8)
                writer.endObject()
            }
            writer.endArray()
        }
        #expect(whole.list.count == 1 && whole.text == chunks.text)
        #expect((try parse(chunks.text) as? [Any])?.count == 500)
    }

    private struct Inner: Codable, Equatable {
        var name: String
        var tags: [String]
        var ratio: Double?
    }

    private enum Kind: String, Codable { case one, two }

    private struct Outer: Encodable {
        var id: UInt64
        var inner: Inner
        var missing: Inner?
        var list: [Inner]
        var kind: Kind
        var table: [String: Int]
        var link: URL
        var nested: Nested
        var empty: Empty
    }

    /// Encodes through a nested container and a super encoder, as hand-written conformances may.
    private struct Nested: Encodable {
        enum Keys: String, CodingKey { case point, list, after }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var point = container.nestedContainer(keyedBy: Keys.self, forKey: .point)
            try point.encode(1, forKey: .after)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode("x")
            try list.encodeNil()
            try container.encode(true, forKey: .after)
            try Inner(name: "s", tags: [], ratio: 0.5).encode(to: container.superEncoder())
        }
    }

    private struct Empty: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    @Test func encodesEncodableValuesAsJSONEncoderDoes() throws {
        let value = Outer(
            id: 42, inner: Inner(name: "a\"b", tags: ["t1", "t2"], ratio: 0.25), missing: nil,
            list: [Inner(name: "c", tags: [], ratio: nil)], kind: .two, table: ["k": 1, "l": 2],
            link: try #require(URL(string: "https://example.com/a/b?x=1")), nested: Nested(), empty: Empty())
        let ours = try write { writer in
            writer.beginArray()
            try writer.encode(value)
            writer.integer(1)
            writer.endArray()
        }.text
        let theirs = String(decoding: try JSONEncoder().encode([value]), as: UTF8.self)
        let oursParsed = try #require(try parse(ours) as? [Any])
        let theirsParsed = try #require(try parse(theirs) as? [Any])
        #expect(oursParsed.count == 2)
        #expect(NSDictionary(dictionary: oursParsed[0] as? [String: Any] ?? [:]).isEqual(theirsParsed[0]))
        #expect(ours.hasPrefix(#"[{"id":42,"inner":{"name":"a\"b","tags":["t1","t2"],"ratio":0.25},"list":"#))
        #expect(ours.contains(#""nested":{"point":{"after":1},"list":["x",null],"after":true,"super":{"name":"s""#))
        #expect(ours.hasSuffix(#""empty":{}},1]"#))
    }

    /// Declared out of key order, with keys that sort differently by bytes and without case.
    private struct Listing: Encodable {
        var zulu: String
        var playlist: String
        var playPath: String?
        var when: Date
        var items: [Item]
        var table: [String: Int]
        var alpha: Item?
    }

    private struct Item: Encodable {
        var title: String
        var at: Date?
        var bytes: Int64
        var upper: Bool
        /// A key with a capital, which sorts before every lower-case one by bytes.
        enum CodingKeys: String, CodingKey { case title, at, bytes, upper = "Upper" }
    }

    @Test(arguments: [65_536, 1])
    func sortsKeysAndWritesDatesByteForByteAsJSONEncoderDoes(chunkSize: Int) throws {
        let dates: [Date] = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_796_231_444.999),
            Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: 4_107_542_400),
            Date(timeIntervalSince1970: 951_782_400),
        ]
        let values = dates.enumerated().map { index, date in
            Listing(
                zulu: "z/\(index) é \u{1F3A5} \"q\" \\ \n\t", playlist: "https://h/a/b.m3u8?x=1&y=2",
                playPath: index % 2 == 0 ? "/library/\(index)/index.m3u8" : nil, when: date,
                items: [
                    Item(title: "b", at: date, bytes: -7, upper: true),
                    Item(title: "", at: nil, bytes: Int64.max, upper: false),
                ],
                table: ["b": 2, "a": 1, "B": 3, "aa": 4],
                alpha: index == 1 ? nil : Item(title: "c", at: nil, bytes: 0, upper: false))
        }
        let options = JSONWriter.EncodingOptions(sortedKeys: true, iso8601Dates: true)
        let ours = try write(chunkSize: chunkSize) { writer in
            writer.beginArray()
            writer.integer(0)
            for value in values { try writer.encode(value, options: options) }
            writer.endArray()
        }.text
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let theirs = String(decoding: try encoder.encode(values), as: UTF8.self)
        #expect(ours == "[0," + theirs.dropFirst())
        // Without the options, members keep the order they are encoded in and dates are numbers.
        let plain = try write { writer in try writer.encode(values[0]) }.text
        #expect(plain.hasPrefix(#"{"zulu":"#))
        #expect(plain.contains(#""when":-978307200"#))
    }
}
