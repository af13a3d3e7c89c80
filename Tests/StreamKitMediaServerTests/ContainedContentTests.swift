import StreamKitHTTP
import StreamKitHTTPServer
import Testing

@testable import StreamKitMediaServer

/// What the library and the proxy send as it is, and what they send as a file to save.
@Suite struct ContainedContentTests {
    @Test(arguments: [
        ("video/mp2t", true), ("video/iso.segment", true), ("audio/mp4", true), ("audio/mpegurl", true),
        ("application/vnd.apple.mpegurl", true), ("Application/X-MpegURL; charset=utf-8", true),
        ("application/dash+xml", true), ("application/mp4", true), ("application/octet-stream", true),
        ("binary/octet-stream", true), ("text/vtt; charset=utf-8", true), ("application/ttml+xml", true),
        ("image/png", true), ("image/jpeg", true),
        ("text/html; charset=utf-8", false), ("application/xhtml+xml", false), ("image/svg+xml", false),
        ("text/xml", false), ("application/xml", false), ("application/json", false), ("text/plain", false),
        ("application/javascript", false), ("text/css", false), ("application/pdf", false), ("", false),
        ("multipart/x-mixed-replace; boundary=x", false),
    ])
    func playerContent(type: String, isPlayerContent: Bool) {
        #expect(ContainedContent.isPlayerContent(type) == isPlayerContent, "\(type)")
    }

    @Test func everyResponseIsSandboxedAndOnlySuccessesAreRetyped() {
        var page = HTTPServerResponse(status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"])
        page = ContainedContent.contained(page)
        #expect(page.headers["Content-Security-Policy"] == "sandbox; default-src 'none'")
        #expect(page.headers["X-Content-Type-Options"] == "nosniff")
        #expect(page.headers["Cross-Origin-Resource-Policy"] == "same-origin")
        #expect(page.headers["Content-Type"] == "application/octet-stream")
        #expect(page.headers["Content-Disposition"] == "attachment")
        #expect(page.headers.values("Content-Type").count == 1)

        let segment = ContainedContent.contained(
            HTTPServerResponse(status: .partialContent, headers: ["Content-Type": "video/mp2t"]))
        #expect(segment.headers["Content-Type"] == "video/mp2t" && segment.headers["Content-Disposition"] == nil)
        // An error page is ours, not the origin's: its type stays, the sandbox applies.
        let missing = ContainedContent.contained(.status(.notFound))
        #expect(missing.headers["Content-Disposition"] == nil)
        #expect(missing.headers["Content-Security-Policy"] == "sandbox; default-src 'none'")
    }
}
