import StreamKitHLS
import Testing

@testable import StreamKitDASH

/// A compiled template's URLs, appended to the base's directory where that is what RFC 3986
/// resolution gives, and resolved in full where it is not.
struct SegmentTemplateURLTests {
    @Test(arguments: [
        "v/$RepresentationID$-$Number%05d$.m4s", "$Time$.m4s?token=a$$b", "seg-$Number$.m4s#frag",
        "../up/$Number$.m4s", "./$Number$.m4s", "/root/$Number$.m4s", "https://other.example/$Number$.m4s",
        "?q=$Number$", "a:b/$Number$", "x/./$Number$", "$Bandwidth%08d$/$Number$",
    ])
    func compiledURLsEqualResolvingEachOne(template: String) throws {
        let compiled = try SegmentTemplateText.Compiled(template, id: "hd", bandwidth: 3_000_000)
        for base in [
            "https://cdn.example/show/manifest.mpd?sig=1", "https://cdn.example", "https://cdn.example/a/b/../c/",
            "http://127.0.0.1:8080/x/y.mpd#dash=0/0",
        ] {
            let resolver = TemplateURLResolver(compiled, base: base)
            for (number, time) in [(UInt64(1), UInt64(0)), (42, 90_000), (100_000, UInt64.max)] {
                let expected = resolveURI(
                    try SegmentTemplateText.expand(
                        template, id: "hd", bandwidth: 3_000_000, number: number, time: time),
                    against: base)
                #expect(try resolver.url(number: number, time: time) == expected, "\(template) against \(base)")
            }
        }
        #expect(
            TemplateURLResolver.isPlainRelative(try compiled.expand(number: 1, time: 1))
                == !["../", "./", "/root", "https:", "?q", "a:b", "x/./"].contains { template.hasPrefix($0) })
    }
}
