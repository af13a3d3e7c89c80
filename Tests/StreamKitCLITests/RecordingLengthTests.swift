import Testing

@testable import StreamKitCLI

/// `queue add --duration`: the lengths it takes and the ones it refuses.
@Suite struct RecordingLengthTests {
    @Test(arguments: [
        ("90", 90.0), ("90s", 90), ("2.5", 2.5), ("45m", 2_700), ("1h", 3_600), ("1h30m", 5_400),
        ("1h30m15s", 5_415), ("1m30s", 90), ("0:08", 8), ("1:30", 90), ("1:30:00", 5_400), ("00:00:12.5", 12.5),
        ("2H", 7_200),
    ])
    func takes(text: String, seconds: Double) {
        #expect(RecordingLength(argument: text)?.seconds == seconds, "\(text)")
    }

    @Test(arguments: [
        "", "0", "0s", "-5", "soon", "1x", "30m1h", "1h1h", "1:60", "1:60:00", "::", "1:2:3:4", "h", "1.2.3",
    ])
    func refuses(text: String) {
        #expect(RecordingLength(argument: text) == nil, "\(text)")
    }
}
