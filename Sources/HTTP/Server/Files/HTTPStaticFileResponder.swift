import Core
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves the regular files under a root directory: paths that cannot escape it, media types,
/// `ETag` and `Last-Modified`, conditional requests (304, 412), single byte ranges (206, 416),
/// bodies sent with `sendfile`.
///
/// Escape is refused three times over: the raw path must pass ``HTTPServedPath`` (no `..`,
/// control bytes, backslashes, double encoding, hidden names); the real path (`realpath`, every
/// symbolic link resolved) must lie under the root's real path; and the file actually opened
/// (without following a final link) must be the one checked, so a link swapped in between the
/// check and the open is caught.
public struct HTTPStaticFileResponder: Sendable {
    /// The root's real path.
    public let root: String

    /// Serves the files under `root`.
    ///
    /// - Throws: ``SystemError`` when `root` does not resolve to a directory.
    public init(root: String) throws {
        guard let resolved = Self.realPath(root) else { throw SystemError.current("realpath", subject: root) }
        var status = stat()
        guard stat(resolved, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw SystemError(code: ENOTDIR, operation: "open", subject: root)
        }
        self.root = resolved
    }

    /// The response for `request`, serving the file at `rawPath` (relative to the root, still
    /// percent-encoded, as a route's `*path` captures it).
    public func respond(to request: HTTPServerRequest, rawPath: String) -> HTTPServerResponse {
        guard request.method == .get || request.method == .head else {
            var response = HTTPServerResponse.status(.methodNotAllowed)
            response.headers.add("Allow", "GET, HEAD")
            return response
        }
        switch open(rawPath: rawPath) {
        case .failure(let error):
            return .status(error.status, message: error.message)
        case .success(let (descriptor, validators, name)):
            return response(for: request, descriptor: descriptor, validators: validators, name: name)
        }
    }

    /// Opens the file `rawPath` names, checked to lie under the root.
    ///
    /// - Returns: The open descriptor (owned by the caller), its validators, and its name.
    func open(rawPath: String) -> Result<(Int32, HTTPFileValidators, String), HTTPResponseError> {
        let components: [String]
        switch HTTPServedPath.components(ofRawPath: rawPath) {
        case .failure(let error): return .failure(error)
        case .success(let value): components = value
        }
        let joined = root + "/" + components.joined(separator: "/")
        guard let resolved = Self.realPath(joined) else {
            return .failure(HTTPResponseError(errno == EACCES ? .forbidden : .notFound))
        }
        // Bytes, not `hasPrefix`: String comparison treats canonically equivalent names (NFC and
        // NFD spellings of "é") as equal, while the file system keeps them apart.
        guard resolved.utf8.starts(with: (root + "/").utf8) else {
            return .failure(HTTPResponseError(.forbidden, message: "path leaves the served directory"))
        }
        let descriptor = openFile(resolved, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard descriptor >= 0 else { return .failure(HTTPResponseError(errno == EACCES ? .forbidden : .notFound)) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return .failure(HTTPResponseError(.notFound))
        }
        guard let opened = Self.path(of: descriptor), opened.utf8.elementsEqual(resolved.utf8) else {
            close(descriptor)
            return .failure(HTTPResponseError(.forbidden, message: "the file changed while it was opened"))
        }
        #if canImport(Darwin)
        let modified = status.st_mtimespec
        #else
        let modified = status.st_mtim
        #endif
        let nanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
        let tag = EntityTag(
            opaqueTag: String(UInt64(status.st_ino), radix: 16) + "-" + String(Int64(status.st_size), radix: 16) + "-"
                + String(nanoseconds, radix: 16))
        let validators = HTTPFileValidators(
            length: Int64(status.st_size), entityTag: tag, lastModified: Int64(modified.tv_sec))
        return .success((descriptor, validators, components.last!))
    }

    private func response(
        for request: HTTPServerRequest, descriptor: Int32, validators: HTTPFileValidators, name: String
    ) -> HTTPServerResponse {
        var headers: HTTPHeaders = [
            "Content-Type": HTTPMediaTypes.forFile(named: name),
            "Accept-Ranges": "bytes",
            "ETag": validators.entityTag.headerValue,
            "Last-Modified": HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(validators.lastModified))),
        ]
        switch HTTPConditionalRequest.evaluate(method: request.method, headers: request.headers, validators: validators)
        {
        case .notModified:
            close(descriptor)
            headers.remove("Content-Type")
            headers.remove("Accept-Ranges")
            return HTTPServerResponse(status: .notModified, headers: headers)
        case .preconditionFailed:
            close(descriptor)
            return .status(.preconditionFailed)
        case .unsatisfiable:
            close(descriptor)
            var response = HTTPServerResponse.status(.rangeNotSatisfiable)
            response.headers.add(
                "Content-Range", ContentRange.unsatisfied(completeLength: validators.length).headerValue)
            return response
        case .whole:
            let region = HTTPFileRegion(takingOwnershipOf: descriptor, range: ByteRange(0, validators.length))
            return HTTPServerResponse(status: .ok, headers: headers, body: .file(region))
        case .part(let range):
            headers.add("Content-Range", ContentRange(range: range, completeLength: validators.length).headerValue)
            let region = HTTPFileRegion(takingOwnershipOf: descriptor, range: range)
            return HTTPServerResponse(status: .partialContent, headers: headers, body: .file(region))
        }
    }

    /// `realpath(3)`: every link and `.`/`..` resolved, or `nil` (with `errno` set).
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The path of the file an open descriptor refers to, as the kernel knows it.
    static func path(of descriptor: Int32) -> String? {
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #endif
    }
}

/// `open(2)` without a mode, named apart from the responder's own `open`.
private func openFile(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}
