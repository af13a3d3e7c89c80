/// Turns the raw path of a request into a relative path that cannot leave a root directory.
///
/// The path is percent-decoded exactly once, then refused when anything in it could step out
/// of the root or mean something else on some system: `..`, `.` and hidden names, a `%` left
/// after decoding (double encoding), backslashes, NUL and other control bytes, bytes that are
/// not UTF-8. Empty components (`//`, a leading `/`) are dropped, so an absolute path becomes
/// relative to the root. Symbolic links are the file responder's part: it opens the file so that
/// resolving them cannot leave the root.
import StreamKitHTTP

enum HTTPServedPath {
    /// The relative path `rawPath` names (components joined by single slashes), or the status to
    /// refuse it with.
    static func relativePath(ofRawPath rawPath: String) -> Result<String, HTTPResponseError> {
        if isPlainRelativePath(rawPath) { return .success(rawPath) }
        let bytes: [UInt8]
        if rawPath.utf8.contains(0x25) {
            guard let decoded = ServerPercentDecoding.decode(rawPath) else {
                return .failure(HTTPResponseError(.badRequest, message: "malformed percent-encoding"))
            }
            bytes = decoded
        } else {
            bytes = Array(rawPath.utf8)
        }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C || $0 == 0x25 }) {
            return .failure(HTTPResponseError(.badRequest, message: "forbidden characters in path"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(HTTPResponseError(.badRequest, message: "path is not UTF-8"))
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x2F { end += 1 }
            if end > start {
                if bytes[start] == 0x2E {
                    if end - start == 2 && bytes[start + 1] == 0x2E {
                        return .failure(HTTPResponseError(.forbidden, message: "path leaves the served directory"))
                    }
                    return .failure(HTTPResponseError(.notFound))  // `.` and hidden names
                }
                if !result.isEmpty { result.append(0x2F) }
                result += bytes[start..<end]
            }
            start = end + 1
        }
        guard !result.isEmpty else { return .failure(HTTPResponseError(.notFound)) }
        return .success(result.count == bytes.count ? text : String(decoding: result, as: UTF8.self))
    }

    /// Whether `path` needs no decoding or normalizing: printable ASCII without `%` or `\`,
    /// components separated by single slashes, none empty and none starting with a dot. The
    /// usual request, answered without copying.
    private static func isPlainRelativePath(_ path: String) -> Bool {
        var previous: UInt8 = 0x2F  // as if a slash came before the first byte
        for byte in path.utf8 {
            guard byte > 0x20 && byte < 0x7F && byte != 0x25 && byte != 0x5C else { return false }
            if previous == 0x2F && (byte == 0x2F || byte == 0x2E) { return false }
            previous = byte
        }
        return previous != 0x2F
    }
}
