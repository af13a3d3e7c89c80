import StreamKitHTTP
import Testing

/// Which URLs carry credentials, as a browser would read them.
@Suite struct URLUserInfoTests {
    @Test(arguments: [
        "http://user:pw@example.com/a", "https://user@example.com/", "http://:pw@example.com",
        "http:user:pw@example.com/a", "http:\\\\user:pw@example.com/", "HTTP:///user:pw@example.com",
        "http://a:b@c@example.com/", "http://user:pw@example.com?x",
    ])
    func credentialsAreFound(_ url: String) {
        #expect(URLUserInfo.isPresent(in: url))
    }

    @Test(arguments: [
        "http://example.com/a@b", "http://example.com/?to=a@b", "http://example.com#a@b",
        "http://example.com\\@evil.example/", "http://example.com:8080/", "https://example.com", "not a url",
    ])
    func otherURLsAreNot(_ url: String) {
        #expect(!URLUserInfo.isPresent(in: url))
    }
}
