import StreamKitCore
import Testing

/// Checks an incremental decoder the way NIO's ByteToMessageDecoderVerifier does: the same input
/// decoded whole, one byte at a time, in seeded random pieces and in any pieces the caller names
/// must give the same outcome. A decoder that keeps state across a short read wrongly, or drops
/// bytes at a piece boundary, gives a different outcome for some split.
///
/// The caller's `decode` feeds the pieces, in order, to a fresh decoder and returns everything it
/// produced, with the error it ended on (``DecoderOutcome``), so an error must also be the same
/// however the input came.
public enum DecoderVerifier {
    /// The pieces the sizes cut `input` into; the last size repeats, an empty list is one piece.
    public static func pieces(of input: [UInt8], sizes: [Int]) -> [ArraySlice<UInt8>] {
        guard !input.isEmpty else { return [] }
        var pieces: [ArraySlice<UInt8>] = []
        var offset = 0
        var index = 0
        while offset < input.count {
            let size = sizes.isEmpty ? input.count : max(1, sizes[min(index, sizes.count - 1)])
            let end = min(input.count, offset + size)
            pieces.append(input[offset..<end])
            offset = end
            index += 1
        }
        return pieces
    }

    /// Decodes `input` whole, byte by byte, in `randomRuns` random splits and in each of
    /// `splits`, recording an issue for every run that differs from the whole one.
    ///
    /// - Parameters:
    ///   - input: The bytes.
    ///   - splits: Piece sizes to try besides the random ones (one message per piece, say).
    ///   - randomRuns: How many random splits, from a generator seeded by the input's length.
    ///   - decode: Feeds the pieces to a new decoder and returns what it produced.
    /// - Returns: The outcome of decoding the input whole.
    @discardableResult
    public static func verify<Outcome: Equatable>(
        _ input: [UInt8], splits: [[Int]] = [], randomRuns: Int = 20,
        sourceLocation: SourceLocation = #_sourceLocation,
        decode: ([ArraySlice<UInt8>]) -> Outcome
    ) -> Outcome {
        let whole = decode(pieces(of: input, sizes: []))
        let byteByByte = decode(pieces(of: input, sizes: [1]))
        #expect(byteByByte == whole, "one byte at a time differs: \(byteByByte)", sourceLocation: sourceLocation)
        for sizes in splits {
            let outcome = decode(pieces(of: input, sizes: sizes))
            #expect(outcome == whole, "pieces \(sizes) differ: \(outcome)", sourceLocation: sourceLocation)
        }
        var generator = SplitMix64(seed: UInt64(input.count) &* 7919)
        for _ in 0..<randomRuns {
            let sizes = (0..<16).map { _ in Int.random(in: 1...max(1, input.count / 3), using: &generator) }
            let outcome = decode(pieces(of: input, sizes: sizes + [Int.random(in: 1...7, using: &generator)]))
            #expect(outcome == whole, "pieces \(sizes) differ: \(outcome)", sourceLocation: sourceLocation)
        }
        return whole
    }
}

/// What a decoder produced from some input: its values in order, and the error it stopped at.
public struct DecoderOutcome<Value: Equatable>: Equatable, CustomStringConvertible {
    public var values: [Value]
    /// The error's description: errors compare by what they say, offsets included.
    public var error: String?

    public init(values: [Value] = [], error: String? = nil) {
        self.values = values
        self.error = error
    }

    /// Runs `body`, keeping what it appended before an error and the error's description.
    public static func collecting(_ body: (inout [Value]) throws -> Void) -> DecoderOutcome {
        var values: [Value] = []
        do {
            try body(&values)
            return DecoderOutcome(values: values)
        } catch {
            return DecoderOutcome(values: values, error: "\(error)")
        }
    }

    public var description: String {
        "\(values.count) values \(values.map { "\($0)".prefix(80) }), error: \(error ?? "none")"
    }
}
