import StreamKitCore
import Testing

/// A kinded error for these tests, with a URL and a status as context.
struct KindedErrorSample: KindedError {
    enum Kind: Hashable, Sendable { case truncated, refused }

    let kind: Kind
    var url: String?
    var status: Int?
    var detail: String

    init(_ kind: Kind, url: String? = nil, status: Int? = nil, detail: String = "") {
        self.kind = kind
        self.url = url
        self.status = status
        self.detail = detail
    }

    var description: String { message("\(kind)", url.map { " for \($0)" }, status.map { " (HTTP \($0))" }) }
}

@Suite struct KindedErrorTests {
    /// An error → its description: present clauses in order, the detail after a colon when there is one.
    static let messages: [(KindedErrorSample, String)] = [
        (KindedErrorSample(.truncated), "truncated"),
        (KindedErrorSample(.truncated, detail: "body ended at byte 10"), "truncated: body ended at byte 10"),
        (KindedErrorSample(.refused, url: "http://a/b"), "refused for http://a/b"),
        (KindedErrorSample(.refused, status: 404), "refused (HTTP 404)"),
        (
            KindedErrorSample(.refused, url: "http://a/b", status: 503, detail: "busy"),
            "refused for http://a/b (HTTP 503): busy"
        ),
    ]

    @Test(arguments: messages)
    func messageJoinsPresentClausesAndDetail(error: KindedErrorSample, expected: String) {
        #expect(error.description == expected)
    }

    /// Two errors → whether they are equal: by kind alone, whatever the context.
    static let equalities: [(KindedErrorSample, KindedErrorSample, Bool)] = [
        (KindedErrorSample(.truncated), KindedErrorSample(.truncated), true),
        (
            KindedErrorSample(.truncated, detail: "a"),
            KindedErrorSample(.truncated, url: "http://a/b", status: 200, detail: "b"),
            true
        ),
        (KindedErrorSample(.truncated), KindedErrorSample(.refused), false),
        (KindedErrorSample(.truncated, detail: "same"), KindedErrorSample(.refused, detail: "same"), false),
    ]

    @Test(arguments: equalities)
    func errorsAreEqualByKind(lhs: KindedErrorSample, rhs: KindedErrorSample, equal: Bool) {
        #expect((lhs == rhs) == equal)
        #expect((lhs.hashValue == rhs.hashValue) == equal)
    }

    @Test func aSetKeepsOneErrorOfEachKind() {
        let errors: Set = [
            KindedErrorSample(.truncated, detail: "a"), KindedErrorSample(.truncated, detail: "b"),
            KindedErrorSample(.refused),
        ]
        #expect(errors.count == 2)
    }
}
