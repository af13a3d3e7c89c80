import StreamKitCore
import Testing

@testable import StreamKitHTTPClient

/// Inputs the fuzz targets found, kept as regression cases.
@Suite struct HTTPClientFuzzRegressionTests {
    /// Feeds `bytes` the way Fuzz/HTTPClientResponseHead does and checks the same properties.
    static func check(_ bytes: [UInt8]) {
        var parser = HTTPClientResponseHeadParser()
        var lineStart = 0
        for index in 0..<bytes.count where bytes[index] == 10 || index == bytes.count - 1 {
            let result = parser.feed(line: bytes[lineStart...index])
            lineStart = index + 1
            if case .malformed = result { break }
        }
        for head in parser.completedHeads {
            var again = HTTPClientResponseHeadParser()
            var last: HTTPClientResponseHeadParser.LineResult = .needMore
            for line in head.lines { last = again.feed(line: Array(line.utf8)) }
            #expect(last == .complete(head))
        }
    }

    @Test func crashE7199387() {
        Self.check([
            72, 84, 84, 80, 47, 46, 48, 32, 49, 52, 54, 32, 71, 70, 80, 47, 52, 54, 32, 71, 70, 80, 47, 84, 84, 80, 49,
            52, 32, 32, 32, 70, 70, 70, 13, 10, 70, 182, 58, 182, 84, 84, 80, 49, 246, 246, 246, 246, 246, 246, 246,
            246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246,
            246, 246, 246, 58, 182, 84, 84, 80, 49, 52, 32, 32, 32, 70, 70, 70, 13, 10, 70, 182, 58, 246, 246, 246, 246,
            246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246, 246,
            246, 52, 32, 32, 32, 70, 70, 70, 13, 10, 70, 182, 58, 182, 182, 182, 182, 182, 182, 32, 162, 49, 72, 84, 84,
            80, 47, 52, 32, 71, 70, 80, 47, 52, 54, 32, 71, 70, 80, 47, 84, 84, 80, 80, 49, 52, 32, 32, 32, 70, 70, 70,
            13, 10, 70, 182, 58, 46, 182, 84, 84, 80, 49, 52, 32, 32, 32, 70, 70, 70, 13, 32, 10, 70, 182, 58, 182, 182,
            182, 182, 182, 182, 182, 10, 10, 10, 10, 182, 182, 182, 182, 182, 10, 10, 10, 10, 182, 182, 182, 182, 182,
            182, 182,
        ])
    }

    @Test func crashCFB9C4CD() {
        Self.check([
            72, 84, 84, 80, 47, 46, 48, 32, 49, 52, 54, 32, 71, 70, 80, 47, 52, 54, 32, 71, 70, 80, 47, 84, 84, 80, 49,
            52, 32, 32, 32, 70, 70, 70, 13, 10, 70, 182, 58, 182, 84, 84, 80, 52, 13, 10, 32, 186, 185, 47, 52, 54, 32,
            71, 70, 80, 47, 84, 84, 80, 48, 50, 32, 32, 32, 70, 70, 70, 13, 10, 70, 182, 58, 182, 84, 84, 80, 49, 52,
            13, 10, 32, 186, 185, 185, 242, 245, 185, 73, 204, 182, 182, 182, 182, 182, 74, 80, 10, 13, 0, 0, 0, 0, 0,
            0, 0, 10, 10, 10, 182, 182, 182, 182, 182, 10, 10, 10, 10, 182, 182, 182, 182, 182, 182, 182,
        ])
    }
}
