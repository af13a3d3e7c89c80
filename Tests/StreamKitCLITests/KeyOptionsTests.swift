import Foundation
import StreamKitCore
import StreamKitDownloads
import StreamKitTestSupport
import Testing

@testable import StreamKitCLI

/// `--key`, `--key-file` and `--iv` as words: what they parse to and the usage errors naming them.
@Suite struct KeyOptionsTests {
    static let hex = "00112233445566778899aabbccddeeff"

    @Test(arguments: [
        (hex, Hex.decode(hex)), ("0x" + hex.uppercased(), Hex.decode(hex)), ("", nil), ("0x", nil),
        (String(hex.dropLast(2)), nil), (hex + "00", nil), (String(hex.dropLast()) + "g", nil), ("key", nil),
    ])
    func hexBlocks(word: String, bytes: [UInt8]?) {
        #expect(HexBlock(argument: word)?.bytes == bytes)
    }

    @Test(arguments: [
        ("https://k.example/a.key=" + hex, "https://k.example/a.key", KeyFileArgument.Source.hex(Hex.decode(hex)!)),
        ("keys/b.key=0x" + hex, "keys/b.key", .hex(Hex.decode(hex)!)),
        // Split at the last "=": a URI may have a query.
        ("https://k.example/key?id=5=/tmp/k.bin", "https://k.example/key?id=5", .file("/tmp/k.bin")),
        ("a.key=./0123", "a.key", .file("./0123")),
        ("a.key=k.hex", "a.key", .file("k.hex")),
    ])
    func keyFileWords(word: String, uri: String, source: KeyFileArgument.Source) throws {
        let parsed = try #require(KeyFileArgument(argument: word))
        #expect(parsed.uri == uri && parsed.source == source)
    }

    @Test(arguments: ["a.key", "=" + hex, "a.key=", "a.key=0123", "a.key=" + hex + "ff"])
    func keyFileWordsRefused(word: String) {
        #expect(KeyFileArgument(argument: word) == nil)
    }

    @Test func keyFilesHoldRawBytesOrHex() {
        let key = Hex.decode(Self.hex)!
        #expect(KeyFileArgument.key(fromFileContents: key) == key)
        #expect(KeyFileArgument.key(fromFileContents: Array((Self.hex + "\n").utf8)) == key)
        #expect(KeyFileArgument.key(fromFileContents: Array(("  0x" + Self.hex + "\r\n").utf8)) == key)
        #expect(KeyFileArgument.key(fromFileContents: Array(key.prefix(15))) == nil)
        #expect(KeyFileArgument.key(fromFileContents: key + [0]) == nil)
        #expect(KeyFileArgument.key(fromFileContents: Array(Self.hex.dropLast(2).utf8)) == nil)
        #expect(KeyFileArgument.key(fromFileContents: []) == nil)
    }

    private func run(_ arguments: [String]) async -> (code: ExitCode, output: String, error: String) {
        let context = CommandContext.capturing()
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: context)
        return (code, context.output.text, context.errorOutput.text)
    }

    @Test(arguments: [
        (["--key", "abcd"], "--key must be 32 hexadecimal digits (16 bytes, AES-128), got 4 digits (2 bytes)"),
        (["--key", "secret"], "--key must be 32 hexadecimal digits (16 bytes, AES-128), it is not hexadecimal"),
        (["--iv", hex + "00"], "--iv must be 32 hexadecimal digits (16 bytes, AES-128), got 34 digits (17 bytes)"),
        (["--key-file", "a.key"], "--key-file must be URI=FILE or URI=HEX, got 'a.key'"),
        (
            ["--key-file", "a.key=abcdef"],
            "--key-file must be URI=FILE or URI=HEX: the key of a.key must be 32 hexadecimal digits (16 bytes, "
                + "AES-128): got 6 digits (3 bytes)"
        ),
        (
            ["--key-file", "a.key=/nonexistent/k.bin"],
            "--key-file a.key=/nonexistent/k.bin: cannot read /nonexistent/k.bin"
        ),
    ])
    func wrongKeysAreUsageErrorsNamingTheOption(arguments: [String], message: String) async {
        let (code, output, error) = await run(["download", "http://127.0.0.1/a.m3u8"] + arguments)
        #expect(code == .usage)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("error: \(message)"), "stderr: \(error)")
    }

    @Test func aKeyFileOfTheWrongLengthIsAUsageErrorNamingIt() async throws {
        let file = try TestRun.makeTemporaryDirectory("key-file").appendingPathComponent("short.key")
        try Data(repeating: 1, count: 15).write(to: file)
        let (code, _, error) = await run(["download", "http://127.0.0.1/a.m3u8", "--key-file", "a.key=" + file.path])
        #expect(code == .usage)
        #expect(
            error.hasPrefix(
                "error: --key-file a.key=\(file.path): \(file.path) holds 15 bytes, not a key (16 bytes, or 32 "
                    + "hexadecimal digits)"), "\(error)")
    }
}
