import Foundation

/// One WebVTT file (W3C WebVTT), as HLS serves it a segment at a time (RFC 8216bis §3.5): its
/// cues, and the `X-TIMESTAMP-MAP` header that ties its times to the media's 90 kHz clock.
/// Comment (`NOTE`), `STYLE` and `REGION` blocks, and blocks that are not cues, are left out.
public struct WebVTTFile: Hashable, Sendable {
    public var timestampMap: WebVTTTimestampMap?
    public var cues: [WebVTTCue]

    public init(timestampMap: WebVTTTimestampMap? = nil, cues: [WebVTTCue]) {
        self.timestampMap = timestampMap
        self.cues = cues
    }

    /// Why a WebVTT file does not parse.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Parses a WebVTT file; a byte-order mark and CRLF or CR line ends are accepted.
    ///
    /// - Throws: ``ParseError`` when the signature (`WEBVTT`) is missing or the
    ///   `X-TIMESTAMP-MAP` header is malformed. A cue whose timing line does not parse is left out,
    ///   as the WebVTT parsing algorithm does.
    public static func parse(_ text: String) throws(ParseError) -> WebVTTFile {
        var body = Substring(text)
        if body.first == "\u{FEFF}" { body = body.dropFirst() }
        let lines = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false)
        guard let signature = lines.first, signature.hasPrefix("WEBVTT"),
            signature.count == 6 || signature.dropFirst(6).first == " " || signature.dropFirst(6).first == "\t"
        else {
            throw ParseError(description: "the file does not start with WEBVTT")
        }
        var index = 1
        var map: WebVTTTimestampMap?
        // Header lines run to the first blank line.
        while index < lines.count, !lines[index].isEmpty {
            if lines[index].contains("-->") { break }  // a cue right after the signature
            let prefix = "X-TIMESTAMP-MAP="
            if lines[index].hasPrefix(prefix) {
                map = try WebVTTTimestampMap.parse(lines[index].dropFirst(prefix.count))
            }
            index += 1
        }
        var cues: [WebVTTCue] = []
        while index < lines.count {
            while index < lines.count, lines[index].isEmpty { index += 1 }
            var block: [Substring] = []
            while index < lines.count, !lines[index].isEmpty {
                block.append(lines[index])
                index += 1
            }
            if let cue = cue(in: block) { cues.append(cue) }
        }
        return WebVTTFile(timestampMap: map, cues: cues)
    }

    /// The cue a block holds: an optional identifier line, the timing line, the text.
    private static func cue(in block: [Substring]) -> WebVTTCue? {
        guard let first = block.first else { return nil }
        for keyword in ["NOTE", "STYLE", "REGION"] where first.hasPrefix(keyword) {
            let rest = first.dropFirst(keyword.count)
            if rest.isEmpty || rest.first == " " || rest.first == "\t" { return nil }
        }
        let timingIndex = first.contains("-->") ? 0 : 1
        guard timingIndex < block.count, block[timingIndex].contains("-->") else { return nil }
        let timing = block[timingIndex]
        guard let arrow = timing.range(of: "-->") else { return nil }
        let startText = timing[..<arrow.lowerBound].trimmingCharacters(in: [" ", "\t"])
        let rest = timing[arrow.upperBound...].drop { $0 == " " || $0 == "\t" }
        let endText = rest.prefix { $0 != " " && $0 != "\t" }
        let settings = rest.dropFirst(endText.count).trimmingCharacters(in: [" ", "\t"])
        guard let start = WebVTTTime.milliseconds(Substring(startText)),
            let end = WebVTTTime.milliseconds(endText)
        else { return nil }
        return WebVTTCue(
            identifier: timingIndex == 1 ? String(first) : nil, start: start, end: end, settings: settings,
            text: block[(timingIndex + 1)...].joined(separator: "\n"))
    }

    /// The file as WebVTT text: the signature, the timestamp map when there is one, the cues.
    public func serialized() -> String {
        var text = "WEBVTT\n"
        if let timestampMap {
            text += "X-TIMESTAMP-MAP=MPEGTS:\(timestampMap.mpegts),LOCAL:\(WebVTTTime.text(timestampMap.local))\n"
        }
        for cue in cues {
            text += "\n"
            if let identifier = cue.identifier { text += identifier + "\n" }
            text += WebVTTTime.text(cue.start) + " --> " + WebVTTTime.text(cue.end)
            if !cue.settings.isEmpty { text += " " + cue.settings }
            text += "\n" + cue.text + "\n"
        }
        return text
    }
}

/// A WebVTT cue; times in milliseconds.
public struct WebVTTCue: Hashable, Sendable {
    public var identifier: String?
    public var start: Int64
    public var end: Int64
    /// The cue settings after the end time (`line:0 align:start`), as written.
    public var settings: String
    /// The cue text, its lines joined by `\n`, markup as written.
    public var text: String

    public init(identifier: String? = nil, start: Int64, end: Int64, settings: String = "", text: String) {
        self.identifier = identifier
        self.start = start
        self.end = end
        self.settings = settings
        self.text = text
    }
}

/// `X-TIMESTAMP-MAP=MPEGTS:<90 kHz>,LOCAL:<cue time>` (RFC 8216bis §3.5): the cue time `local`
/// (milliseconds) is the media time `mpegts` (a 33-bit MPEG-2 timestamp).
public struct WebVTTTimestampMap: Hashable, Sendable {
    public var mpegts: Int64
    public var local: Int64

    public init(mpegts: Int64, local: Int64) {
        self.mpegts = mpegts
        self.local = local
    }

    /// The value after `X-TIMESTAMP-MAP=`: both fields, in either order.
    static func parse(_ value: Substring) throws(WebVTTFile.ParseError) -> WebVTTTimestampMap {
        var mpegts: Int64?
        var local: Int64?
        for field in value.split(separator: ",") {
            let field = field.trimmingCharacters(in: [" ", "\t"])
            if field.hasPrefix("MPEGTS:") {
                mpegts = Int64(field.dropFirst("MPEGTS:".count)).flatMap { $0 >= 0 ? $0 : nil }
            } else if field.hasPrefix("LOCAL:") {
                local = WebVTTTime.milliseconds(Substring(field.dropFirst("LOCAL:".count)))
            }
        }
        guard let mpegts, let local else {
            throw WebVTTFile.ParseError(description: "X-TIMESTAMP-MAP=\(value) is not MPEGTS:<ticks>,LOCAL:<time>")
        }
        return WebVTTTimestampMap(mpegts: mpegts, local: local)
    }
}

/// WebVTT timestamps: `[HH:]MM:SS.mmm`, hours of two or more digits.
enum WebVTTTime {
    /// The milliseconds a timestamp gives, `nil` when it is not one.
    static func milliseconds(_ text: Substring) -> Int64? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else { return nil }
        let secondsFields = fields[fields.count - 1].split(separator: ".", omittingEmptySubsequences: false)
        guard secondsFields.count == 2, secondsFields[1].count == 3, secondsFields[0].count == 2,
            fields[fields.count - 2].count == 2, fields.count == 2 || fields[0].count >= 2
        else { return nil }
        var values: [Int64] = []
        for field in fields.dropLast() + secondsFields {
            guard field.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(field) else { return nil }
            values.append(value)
        }
        let hours = fields.count == 3 ? values[0] : 0
        let minutes = values[values.count - 3]
        let seconds = values[values.count - 2]
        guard minutes < 60, seconds < 60, hours < 1_000_000 else { return nil }
        return ((hours * 60 + minutes) * 60 + seconds) * 1000 + values[values.count - 1]
    }

    /// `HH:MM:SS.mmm` with `separator` before the milliseconds (`,` for SubRip).
    static func text(_ milliseconds: Int64, separator: Character = ".") -> String {
        let value = max(milliseconds, 0)
        let hours = value / 3_600_000
        let minutes = value / 60_000 % 60
        let seconds = value / 1000 % 60
        func pad(_ number: Int64, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(width - digits.count, 0)) + digits
        }
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2))\(separator)\(pad(value % 1000, 3))"
    }
}
