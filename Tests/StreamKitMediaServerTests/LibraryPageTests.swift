import Testing

@testable import StreamKitMediaServer

@Suite struct LibraryPageTests {
    @Test func escapesAndFormats() {
        #expect(LibraryPage.escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(LibraryPage.formatSize(512) == "512 B")
        #expect(LibraryPage.formatSize(1536) == "1.5 KiB")
        #expect(LibraryPage.formatSize(10 * 1024 * 1024 + 300 * 1024) == "10.3 MiB")
        #expect(LibraryPage.formatDuration(42.4) == "0:42")
        #expect(LibraryPage.formatDuration(3723) == "1:02:03")
    }
}
