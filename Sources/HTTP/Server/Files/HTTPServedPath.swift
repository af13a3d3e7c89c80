/// Turns the raw path of a request into path components that cannot leave a root directory.
///
/// The path is percent-decoded exactly once, then refused when anything in it could step out
/// of the root or mean something else on some system: `..`, `.` and hidden names, a `%` left
/// after decoding (double encoding), backslashes, NUL and other control bytes, bytes that are
/// not UTF-8. Empty components (`//`, a leading `/`) are dropped, so an absolute path becomes
/// relative to the root. Symbolic links are the file responder's part: it resolves the real
/// path and checks that it is still under the root.
enum HTTPServedPath {
    /// The components of `rawPath` (relative to a root, still percent-encoded), or the status
    /// to refuse it with.
    static func components(ofRawPath rawPath: String) -> Result<[String], HTTPResponseError> {
        guard let bytes = ServerPercentDecoding.decode(rawPath) else {
            return .failure(HTTPResponseError(.badRequest, message: "malformed percent-encoding"))
        }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C || $0 == 0x25 }) {
            return .failure(HTTPResponseError(.badRequest, message: "forbidden characters in path"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(HTTPResponseError(.badRequest, message: "path is not UTF-8"))
        }
        var components: [String] = []
        for component in text.split(separator: "/", omittingEmptySubsequences: true) {
            if component == ".." {
                return .failure(HTTPResponseError(.forbidden, message: "path leaves the served directory"))
            }
            if component.hasPrefix(".") {
                return .failure(HTTPResponseError(.notFound))
            }
            components.append(String(component))
        }
        guard !components.isEmpty else { return .failure(HTTPResponseError(.notFound)) }
        return .success(components)
    }
}
