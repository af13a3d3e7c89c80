import Foundation
import Testing

/// README.md's Swift examples are the ones `ReadmeExamples.swift` compiles: each block's code,
/// line for line, stands in that file, and each module it imports is imported there.
@Suite struct ReadmeExamplesTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The fenced `swift` blocks of a Markdown text, each as its lines.
    static func swiftBlocks(in markdown: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static func trimmed(_ lines: [String]) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test func everyReadmeBlockIsCompiled() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("ReadmeExamples.swift"),
            encoding: .utf8)
        let compiledLines = Self.trimmed(compiled.split(separator: "\n").map(String.init))
        let blocks = Self.swiftBlocks(in: readme)
        #expect(blocks.count >= 5, "found \(blocks.count) swift blocks in README.md")
        for block in blocks {
            let imports = block.filter { $0.hasPrefix("import ") }
            for line in imports {
                #expect(compiledLines.contains(line), "README imports what ReadmeExamples.swift does not: \(line)")
            }
            let code = Self.trimmed(block.filter { !$0.hasPrefix("import ") })
            let found = (0...max(0, compiledLines.count - code.count)).contains { start in
                Array(compiledLines[start..<min(compiledLines.count, start + code.count)]) == code
            }
            #expect(found, "README block not in ReadmeExamples.swift:\n\(code.joined(separator: "\n"))")
        }
    }

    @Test func aChangedLineIsNoticed() {
        let blocks = Self.swiftBlocks(in: "text\n```swift\nimport A\n\nlet x = 1\n```\nmore\n```sh\nls\n```\n")
        #expect(blocks == [["import A", "", "let x = 1"]])
    }
}
