import StreamKitCLI
import Testing

/// Help is wrapped to the terminal, or to 80 columns when standard output is not one.
@Suite struct HelpWrappingTests {
    @Test(arguments: [
        // Short text stays on one line after the prefix.
        ("Connections.", 40, "  -j      ", 10, "  -j      Connections."),
        // Lines break at spaces; continuation lines hang at the indent.
        (
            "The port to listen on; 0 picks a free one.", 30, "  --port  ", 10,
            "  --port  The port to listen\n          on; 0 picks a free\n          one."
        ),
        // A line exactly as wide as the width fits.
        ("aaaa bbbb", 9, "", 0, "aaaa bbbb"),
        ("aaaa bbbb", 8, "", 0, "aaaa\nbbbb"),
        // A word wider than the room has a line to itself, uncut.
        ("a https://example.com/a/long/path b", 12, "", 2, "a\n  https://example.com/a/long/path\n  b"),
        // Line breaks in the text are kept; later lines hang too.
        ("one two\nthree four", 9, "> ", 2, "> one two\n  three\n  four"),
        // A blank line stays blank.
        ("one\n\ntwo", 80, "", 0, "one\n\ntwo"),
    ])
    func wrapsAtSpacesWithAHangingIndent(text: String, width: Int, prefix: String, indent: Int, expected: String) {
        #expect(HelpFormatter.wrap(text, width: width, prefix: prefix, indent: indent) == expected)
    }

    @Test func wordsStayWholeWhenTheyHoldSpaces() {
        let usage = ["tool", "[--limit-rate <rate>]", "[--json]"]
        #expect(
            HelpFormatter.wrap(words: usage, width: 24, prefix: "USAGE: ", indent: 7)
                == "USAGE: tool\n       [--limit-rate <rate>]\n       [--json]")
    }
}
