import Foundation
import Testing

/// docs/ARCHITECTURE.md's module table against Package.swift: every target listed, no target
/// that does not exist, and each one's dependencies as declared.
@Suite struct ArchitectureMapTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Each target of a manifest with the names of the targets and products it depends on,
    /// read from its declarations (`.target(name: "X", dependencies: [...])` and the like).
    static func targets(inManifest manifest: String) -> [String: Set<String>] {
        var targets: [String: Set<String>] = [:]
        let kinds = [".target(", ".executableTarget(", ".testTarget(", ".systemLibrary("]
        var searchStart = manifest.startIndex
        while let found = kinds.compactMap({ manifest.range(of: $0, range: searchStart..<manifest.endIndex) })
            .min(by: { $0.lowerBound < $1.lowerBound })
        {
            let body = balanced(manifest, from: found.upperBound, open: "(", close: ")")
            searchStart = body.endIndex
            // Searching on after the declaration's closing parenthesis skips the
            // `.target(name:condition:)` entries of its dependency list.
            guard let name = firstQuoted(after: "name:", in: body) else { continue }
            var dependencies: Set<String> = []
            let declaration = String(body)
            if let list = declaration.range(of: "dependencies:") {
                let open = declaration[list.upperBound...].firstIndex(of: "[")!
                let inside = balanced(declaration, from: declaration.index(after: open), open: "[", close: "]")
                dependencies = Set(quoted(in: inside))
            }
            targets[name] = dependencies
        }
        return targets
    }

    /// The text from `start` to the bracket that closes the one just before it.
    static func balanced(_ text: String, from start: String.Index, open: Character, close: Character) -> Substring {
        var depth = 1
        var index = start
        while index < text.endIndex {
            if text[index] == open { depth += 1 }
            if text[index] == close {
                depth -= 1
                if depth == 0 { return text[start..<index] }
            }
            index = text.index(after: index)
        }
        return text[start...]
    }

    static func quoted(in text: Substring) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    static func firstQuoted(after label: String, in text: Substring) -> String? {
        guard let range = text.range(of: label) else { return nil }
        return quoted(in: text[range.upperBound...]).first
    }

    /// The module table's rows: target name and the names in its "depends on" column.
    static func table(inArchitecture document: String) -> [String: Set<String>] {
        var rows: [String: Set<String>] = [:]
        for line in document.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5,
                ["library", "system library", "executable", "tests", "library (tests only)"]
                    .contains(cells[2])
            else { continue }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let dependencies = cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            rows[name] = Set(dependencies)
        }
        return rows
    }

    @Test func theModuleTableIsPackageSwift() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let document = try String(
            contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let declared = Self.targets(inManifest: manifest)
        let drawn = Self.table(inArchitecture: document)
        #expect(declared.count >= 30, "read \(declared.keys.sorted()) from Package.swift")
        let missing = Set(declared.keys).subtracting(drawn.keys)
        let invented = Set(drawn.keys).subtracting(declared.keys)
        #expect(missing.isEmpty, "targets missing from docs/ARCHITECTURE.md's table: \(missing.sorted())")
        #expect(
            invented.isEmpty, "targets in docs/ARCHITECTURE.md that Package.swift does not have: \(invented.sorted())")
        for (name, dependencies) in declared.sorted(by: { $0.key < $1.key }) {
            guard let row = drawn[name] else { continue }
            #expect(row == dependencies, "\(name): Package.swift \(dependencies.sorted()), the table \(row.sorted())")
        }
    }

    @Test func everyLibraryTargetIsNamedStreamKitAndInTheUmbrellaProduct() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declared = Self.targets(inManifest: manifest)
        let list = manifest.range(of: "let libraryTargets = [")!
        let umbrella = Set(Self.quoted(in: Self.balanced(manifest, from: list.upperBound, open: "[", close: "]")))
        for name in declared.keys.sorted() {
            let isTestOrTool = name.hasSuffix("Tests") || name == "streamkit" || name.hasPrefix("bench-")
            #expect(isTestOrTool || name.hasPrefix("StreamKit") || name.hasPrefix("CStreamKit"), "\(name)")
        }
        let libraries = Set(
            declared.keys.filter {
                $0.hasPrefix("StreamKit") && !$0.hasSuffix("Tests") && $0 != "StreamKitTestSupport"
            })
        #expect(
            umbrella == libraries,
            "the StreamKit product lists \(umbrella.sorted()), the libraries are \(libraries.sorted())")
    }

    /// A check of the reader itself: a manifest it misreads would pass the tests above vacuously.
    @Test func theManifestReaderReadsDeclarationsNotDependencies() {
        let manifest = """
            targets: [
                .systemLibrary(name: "CShim", pkgConfig: "shim"),
                .target(name: "A", dependencies: ["B", .target(name: "CShim", condition: linux)]),
                .testTarget(name: "ATests", dependencies: ["A"], swiftSettings: settings),
            ]
            """
        #expect(Self.targets(inManifest: manifest) == ["CShim": [], "A": ["B", "CShim"], "ATests": ["A"]])
    }
}
