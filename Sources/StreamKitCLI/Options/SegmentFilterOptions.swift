import Foundation
import StreamKitDownloads

/// `--section START-END` and `--exclude-segments REGEX`, both repeatable: which segments of an HLS
/// stream go into the package, shared by `download` and `queue add`.
struct SegmentFilterOptions: ParsableArguments {
    @Option(
        name: "section", valueName: "start-end",
        help:
            "HLS: only the segments covering this time span, [HH:]MM:SS[.ms] or seconds, either end optional "
            + "(0:04-0:10, -1:00, 90-); repeatable. Live: where in the DVR window to begin, and for how long.")
    var sections: [TimeSection] = []
    @Option(
        name: "exclude-segments", valueName: "regex",
        help: "HLS: leave out segments whose URL matches this regular expression (ads); repeatable.")
    var excludedSegments: [String] = []

    init() {}

    mutating func validate() throws {
        for pattern in excludedSegments {
            do {
                _ = try NSRegularExpression(pattern: pattern)
            } catch {
                throw ValidationError("--exclude-segments must be a regular expression, got '\(pattern)'")
            }
        }
    }

    /// `selection` with these sections (merged) and patterns.
    func applied(to selection: HLSSelection) -> HLSSelection {
        var selection = selection
        selection.sections = TimeSection.merged(sections)
        selection.excludedSegments = excludedSegments
        return selection
    }
}

extension TimeSection: ExpressibleByArgument {
    public init?(argument: String) {
        guard let section = try? Self.parse(argument) else { return nil }
        self = section
    }

    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        do {
            _ = try parse(argument)
            return "invalid value '\(argument)' for \(name)"
        } catch {
            return "\(name): \(error)"
        }
    }
}
