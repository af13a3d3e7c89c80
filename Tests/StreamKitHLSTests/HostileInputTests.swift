import StreamKitHLS
import StreamKitTestSupport
import Testing

/// Hostile input: errors with line and reason, never a crash, and time linear in the input. The bounds are
/// generous for a debug build; quadratic behaviour on these sizes would take minutes to hours. The work runs on
/// low-priority threads of its own (`measuredInBackground`), and the bounds hold its CPU time, not the wall time:
/// seconds of parsing on the cooperative pool, or beside it at the same priority, stalled the servers other
/// tests of the process were talking to; at low priority the wall time says how busy the machine was.
@Suite struct HostileInputTests {
    private static let mebibyte = 1 << 20

    /// What `body` returned and the CPU time it took, on a low-priority thread of its own.
    private func timed<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> (T, Duration) {
        let (result, cpuTime) = try await measuredInBackground(body)
        return (result, cpuTime)
    }

    private func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
        try await runInBackground(body)
    }

    @Test func aOneMebibyteLine() async throws {
        let long = String(repeating: "a", count: Self.mebibyte)
        for text in [
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(long).ts\n",  // URI line
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\(long)\nx.ts\n",  // EXTINF title
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n# \(long)\n#EXTINF:1,\nx.ts\n",  // comment
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-KEY:METHOD=AES-128,URI=\"\(long)\"\n#EXTINF:1,\nx.ts\n",
        ] {
            let (parsed, elapsed) = try await timed { try Playlist.parse(text) }
            #expect(parsed.playlist.media?.segments.count == 1)
            #expect(elapsed < .seconds(10), "took \(elapsed)")
        }
        let spaces = "#EXTM3U\n" + String(repeating: " ", count: Self.mebibyte) + "\n#EXT-X-TARGETDURATION:1\n"
        let (parsed, elapsed) = try await timed { try Playlist.parse(spaces) }
        #expect(parsed.warnings.map(\.line) == [2] && elapsed < .seconds(10))
        let digits = "#EXTM3U\n#EXT-X-TARGETDURATION:" + String(repeating: "9", count: Self.mebibyte) + "\n"
        let warning = try #require(try Playlist.parse(digits).warnings.first { $0.line == 2 })
        #expect(warning.line == 2 && warning.reason.hasPrefix("EXT-X-TARGETDURATION is not a decimal integer: '9999"))
        #expect(warning.reason.count < 200)  // the message quotes an excerpt, not the whole line
    }

    @Test func aMillionAttributes() async throws {
        let text = try await offPool {
            var line = "#EXT-X-STREAM-INF:BANDWIDTH=1"
            line.reserveCapacity(13_000_000)
            for index in 0..<1_000_000 { line += ",X-\(index)=\(index)" }
            return "#EXTM3U\n\(line)\nv.m3u8\n"
        }
        let (parsed, elapsed) = try await timed { try Playlist.parse(text) }
        let variant = try #require(parsed.playlist.multivariant?.variants.first)
        #expect(variant.otherAttributes.count == 1_000_000)
        #expect(variant.otherAttributes.last == Attribute(name: "X-999999", value: .unquoted("999999")))
        #expect(elapsed < .seconds(60), "took \(elapsed)")
        // The same name a million times: every duplicate is a warning, still linear.
        let duplicates =
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1" + String(repeating: ",A=1", count: 1_000_000) + "\nv.m3u8\n"
        let (again, duplicateTime) = try await timed { try Playlist.parse(duplicates) }
        #expect(again.warnings.count == 999_999 && again.warnings.allSatisfy { $0.line == 2 })
        #expect(duplicateTime < .seconds(60), "took \(duplicateTime)")
    }

    @Test func unterminatedQuotes() async throws {
        let long =
            "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"" + String(repeating: "a,b=", count: Self.mebibyte / 4) + "\n"
        let (result, elapsed) = try await timed { Result { try Playlist.parse(long) } }
        let error = try #require(throws: PlaylistError.self) { try result.get() }
        #expect(error.description == "line 2: unterminated quoted string in attribute URI of EXT-X-KEY")
        #expect(elapsed < .seconds(10))
        // Strict mode reports every one, still in linear time.
        let many = "#EXTM3U\n" + String(repeating: "#EXT-X-MAP:URI=\"x\n", count: 100_000)
        let (strictResult, strictTime) = try await timed { Result { try Playlist.parse(many, options: .strict) } }
        let strict = try #require(throws: PlaylistError.self) { try strictResult.get() }
        // Every unterminated quote, and the missing EXT-X-TARGETDURATION.
        #expect(strict.diagnostics.count == 100_001 && strict.diagnostics.last?.line == 100_001)
        #expect(
            strict.diagnostics.dropFirst().allSatisfy {
                $0.reason == "unterminated quoted string in attribute URI of EXT-X-MAP"
            })
        #expect(strictTime < .seconds(30))
    }

    @Test func invalidUTF8() async throws {
        var bytes = Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n".utf8)
        for _ in 0..<20_000 { bytes += Array("#EXTINF:1,\nsegment.ts\n".utf8) }
        bytes += [0x23, 0x20, 0xF0, 0x9F, 0x98]  // a truncated four-byte sequence at the very end
        let input = bytes
        let (result, elapsed) = try await timed { Result { try Playlist.parse(input) } }
        let error = try #require(throws: PlaylistError.self) { try result.get() }
        #expect(error.description == "line 40003: invalid UTF-8 (byte 0xF0 at column 3)")
        #expect(elapsed < .seconds(10))
        for lone: UInt8 in [0x80, 0xBF, 0xC0, 0xC1, 0xF5, 0xFF] {
            #expect(throws: PlaylistError.self) { try Playlist.parse(Array("#EXTM3U\n".utf8) + [lone]) }
        }
    }

    /// Definitions that each reference the previous one twice double at every line: 30 lines of
    /// under 2 KB would ask for a terabyte. Substitution stops at its limit with an error.
    @Test func aChainOfDoublingVariablesIsRefused() async throws {
        var lines = ["#EXTM3U", "#EXT-X-DEFINE:NAME=\"a0\",VALUE=\"\(String(repeating: "x", count: 1024))\""]
        for level in 1...30 {
            lines.append("#EXT-X-DEFINE:NAME=\"a\(level)\",VALUE=\"{$a\(level - 1)}{$a\(level - 1)}\"")
        }
        lines += ["#EXT-X-TARGETDURATION:1", "#EXTINF:1,", "{$a30}.ts", ""]
        let text = lines.joined(separator: "\n")
        let (result, elapsed) = try await timed { Result { try Playlist.parse(text) } }
        let error = try #require(throws: PlaylistError.self) { try result.get() }
        #expect(error.reason.contains("would produce more than 16 MiB"), "\(error)")
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func manyLinesAndVariableReferences() async throws {
        let discontinuities =
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + String(repeating: "#EXT-X-DISCONTINUITY\n", count: 200_000)
            + "#EXTINF:1,\na.ts\n"
        let (parsed, elapsed) = try await timed { try Playlist.parse(discontinuities) }
        #expect(parsed.warnings.count == 199_999 && elapsed < .seconds(30))
        let references =
            "#EXTM3U\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"x\"\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n"
            + String(repeating: "{$a}", count: Self.mebibyte / 4) + "\n"
        let (substituted, substitutionTime) = try await timed { try Playlist.parse(references) }
        #expect(substituted.playlist.media?.segments.first?.uri.count == Self.mebibyte / 4)
        #expect(substitutionTime < .seconds(10))
        let openings =
            "#EXTM3U\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"x\"\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n"
            + String(repeating: "{$", count: Self.mebibyte / 2) + "\n"
        let (literal, literalTime) = try await timed { try Playlist.parse(openings) }
        #expect(literal.playlist.media?.segments.first?.uri.count == Self.mebibyte && literalTime < .seconds(10))
    }
}
