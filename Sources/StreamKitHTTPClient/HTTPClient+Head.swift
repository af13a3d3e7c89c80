import StreamKitHTTP

extension HTTPClient {
    /// The response head of `url`, without its body: from a HEAD request, or, when the server
    /// refuses HEAD (a status in `refusedHead`), from a GET for the first byte only, whose body is
    /// dropped. Content is not decoded, so that lengths and validators are the representation's.
    ///
    /// - Parameters:
    ///   - url: The resource.
    ///   - headers: Headers sent with either request.
    ///   - policy: When to retry each request.
    ///   - refusedHead: The statuses that mean "no HEAD here" (405 and 501; some servers whose
    ///     signed URLs are for GET only answer 403).
    /// - Throws: ``HTTPClientError`` when neither request got an answer.
    public func head(
        of url: String, headers: HTTPHeaders = [:], retry policy: HTTPClientRetryPolicy,
        refusedHead: Set<Int> = [405, 501]
    ) async throws -> HTTPClientResponseHead {
        var request = HTTPClientRequest(url: url, method: .head, headers: headers)
        request.decodesContent = false
        let head = try await execute(request, retry: policy).head
        guard refusedHead.contains(head.status.rawValue) else { return head }
        request.method = .get
        request.range = .closed(first: 0, last: 0)
        let response = try await execute(request, retry: policy)
        response.body.cancel()
        return response.head
    }
}
