import Foundation

/// A WebVTT file as SubRip (`.srt`): cues numbered from 1, times as `HH:MM:SS,mmm`, cue settings
/// left out, and of the markup only `<b>`, `<i>` and `<u>` kept (SubRip players know those);
/// voice, class, ruby and timestamp tags are removed and character references decoded.
public enum SubRipWriter {
    /// The SubRip text of `file`'s cues.
    public static func text(of file: WebVTTFile) -> String {
        var text = ""
        for (index, cue) in file.cues.enumerated() {
            if index > 0 { text += "\n" }
            text += "\(index + 1)\n"
            text += WebVTTTime.text(cue.start, separator: ",") + " --> " + WebVTTTime.text(cue.end, separator: ",")
            text += "\n" + plainText(cue.text) + "\n"
        }
        return text
    }

    /// Cue text with tags other than b, i and u removed (their classes too) and `&amp;`, `&lt;`,
    /// `&gt;`, `&nbsp;`, `&lrm;`, `&rlm;` decoded.
    static func plainText(_ cueText: String) -> String {
        var result = ""
        var rest = Substring(cueText)
        while let open = rest.firstIndex(of: "<") {
            result += decoded(rest[..<open])
            guard let close = rest[open...].firstIndex(of: ">") else {
                rest = rest[open...]
                break
            }
            let tag = rest[rest.index(after: open)..<close]
            let closing = tag.hasPrefix("/")
            let name = (closing ? tag.dropFirst() : tag).prefix { $0 != "." && $0 != " " && $0 != "\t" }
            if ["b", "i", "u"].contains(name) { result += closing ? "</\(name)>" : "<\(name)>" }
            rest = rest[rest.index(after: close)...]
        }
        return result + decoded(rest)
    }

    private static func decoded(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var result = String(text)
        for (reference, character) in [
            ("&lt;", "<"), ("&gt;", ">"), ("&nbsp;", "\u{A0}"), ("&lrm;", "\u{200E}"), ("&rlm;", "\u{200F}"),
            ("&amp;", "&"),
        ] {
            result = result.replacingOccurrences(of: reference, with: character)
        }
        return result
    }
}
