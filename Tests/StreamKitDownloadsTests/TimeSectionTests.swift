import Foundation
import StreamKitDownloads
import Testing

/// `--section START-END`: the times it reads, what it refuses, how sections merge, and how a
/// section is written back (package.json, the package id).
@Suite struct TimeSectionTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        let text: String
        let start: Int64?
        let end: Int64?
        var testDescription: String { text }
    }

    static let valid: [Valid] = [
        Valid(text: "0:04-0:10", start: 4_000, end: 10_000),
        Valid(text: "4-10", start: 4_000, end: 10_000),
        Valid(text: "4.5-6.25", start: 4_500, end: 6_250),
        Valid(text: "-0:10", start: nil, end: 10_000),
        Valid(text: "1:00-", start: 60_000, end: nil),
        Valid(text: "01:02:03.5-1:02:04", start: 3_723_500, end: 3_724_000),
        Valid(text: "90-", start: 90_000, end: nil),
        Valid(text: "1:2-1:3", start: 62_000, end: 63_000),
        Valid(text: "0.0005-1", start: 1, end: 1_000),
        Valid(text: "0:59.999-1:00", start: 59_999, end: 60_000),
    ]

    @Test(arguments: valid) func readsTimes(_ valid: Valid) throws {
        let section = try TimeSection.parse(valid.text)
        #expect(section.startMilliseconds == valid.start && section.endMilliseconds == valid.end, "\(section)")
        // Written back, it reads as the same section.
        #expect(try TimeSection.parse(section.description) == section, "\(section)")
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        let text: String
        let reason: String
        var testDescription: String { "'\(text)'" }
    }

    static let invalid: [Invalid] = [
        Invalid(text: "", reason: "is not START-END"),
        Invalid(text: "-", reason: "neither a start nor an end"),
        Invalid(text: "4", reason: "is not START-END"),
        Invalid(text: "1:2:3:4", reason: "is not START-END"),
        Invalid(text: "1:2:3:4-5", reason: "is not a time"),
        Invalid(text: "a-b", reason: "'a' in 'a-b' is not a time"),
        Invalid(text: "10-5", reason: "the end is not after the start"),
        Invalid(text: "5-5", reason: "the end is not after the start"),
        Invalid(text: "-5-10", reason: "cannot be negative"),
        Invalid(text: "0--3", reason: "cannot be negative"),
        Invalid(text: "1-2-3", reason: "is not START-END"),
        Invalid(text: "1:60-2:00", reason: "is not a time"),
        Invalid(text: "1:60:00-", reason: "is not a time"),
        Invalid(text: "1.-2", reason: "is not a time"),
        Invalid(text: "+1-2", reason: "is not a time"),
        Invalid(text: "1e3-", reason: "is not a time"),
        Invalid(text: ":30-", reason: "is not a time"),
    ]

    @Test(arguments: invalid) func refusesWithTheReason(_ invalid: Invalid) {
        #expect {
            _ = try TimeSection.parse(invalid.text)
        } throws: { error in
            "\(error)".contains(invalid.reason)
        }
    }

    @Test func overlappingAndTouchingSectionsMerge() throws {
        func sections(_ texts: String...) throws -> [String] {
            TimeSection.merged(try texts.map { try TimeSection.parse($0) }).map(\.description)
        }
        #expect(try sections("0:10-0:20", "0:04-0:12") == ["0:04-0:20"])
        #expect(try sections("4-6", "6-8", "10-12") == ["0:04-0:08", "0:10-0:12"])
        #expect(try sections("4-6", "1-2") == ["0:01-0:02", "0:04-0:06"])
        #expect(try sections("5-", "1-3", "10-20") == ["0:01-0:03", "0:05-"])
        #expect(try sections("-3", "2-4") == ["-0:04"])
        #expect(try sections("1:00:00-1:00:00.5") == ["1:00:00-1:00:00.5"])
    }
}
