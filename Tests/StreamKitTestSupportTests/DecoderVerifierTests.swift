import StreamKitTestSupport
import Testing

/// The verifier catches what it is for: a decoder whose result depends on how input is split.
@Suite struct DecoderVerifierTests {
    /// Lines ending in "\n", kept across pieces: a correct incremental decoder.
    static func lines(_ pieces: [ArraySlice<UInt8>], dropsPartialLines: Bool = false) -> DecoderOutcome<String> {
        var pending: [UInt8] = []
        var lines: [String] = []
        for piece in pieces {
            pending += piece
            while let end = pending.firstIndex(of: 10) {
                lines.append(String(decoding: pending[..<end], as: UTF8.self))
                pending.removeSubrange(...end)
            }
            // The bug: bytes of a line not yet whole are thrown away at the end of each piece.
            if dropsPartialLines { pending = [] }
        }
        return DecoderOutcome(values: lines, error: pending.isEmpty ? nil : "\(pending.count) bytes left")
    }

    static let input = Array("one\ntwo\nthree\nfour\n".utf8)

    @Test func aCorrectDecoderPasses() {
        let outcome = DecoderVerifier.verify(Self.input, splits: [[4, 4, 6]]) { Self.lines($0) }
        #expect(outcome == DecoderOutcome(values: ["one", "two", "three", "four"]))
    }

    @Test func aDecoderThatLosesBytesAtPieceBoundariesFails() {
        withKnownIssue("the verifier records the split that differs") {
            _ = DecoderVerifier.verify(Self.input) { Self.lines($0, dropsPartialLines: true) }
        }
    }

    @Test func piecesCoverTheInputInOrder() {
        let pieces = DecoderVerifier.pieces(of: Array(0..<10), sizes: [3, 1])
        #expect(pieces.map(Array.init) == [[0, 1, 2], [3], [4], [5], [6], [7], [8], [9]])
        #expect(DecoderVerifier.pieces(of: Array(0..<10), sizes: []).map(Array.init) == [Array(0..<10)])
    }
}
