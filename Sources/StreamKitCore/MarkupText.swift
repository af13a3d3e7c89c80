/// Text made safe for HTML and XML: inside elements and inside attribute values quoted with
/// either `"` or `'`.
public enum MarkupText {
    /// `text` with `&`, `<`, `>`, `"` and `'` written as references (`&amp;`, `&lt;`, `&gt;`,
    /// `&quot;`, `&#39;`: the numeric one, which HTML 4 and XML both read).
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
