import StreamKitCore
import Testing

struct MarkupTextTests {
    @Test func theFiveCharactersBecomeReferencesAndTheRestStays() {
        #expect(
            MarkupText.escaped(#"<a href="x?a=1&b='2'">é</a>"#)
                == "&lt;a href=&quot;x?a=1&amp;b=&#39;2&#39;&quot;&gt;é&lt;/a&gt;")
        #expect(MarkupText.escaped("") == "" && MarkupText.escaped("plain 日本") == "plain 日本")
    }
}
