import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

#if canImport(Glibc)
import CStreamKitLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves the regular files under a root directory: paths that cannot escape it, media types,
/// `ETag` and `Last-Modified`, conditional requests (304, 412), single byte ranges (206, 416),
/// bodies sent with `sendfile`.
///
/// Escape is refused twice over. The raw path must pass ``HTTPServedPath`` (no `..`, control
/// bytes, backslashes, double encoding, hidden names). Then the file is opened so that it cannot
/// lie outside the root even through symbolic links: on Linux with `openat2(RESOLVE_BENEATH)`
/// relative to the root, which the kernel resolves race-free (a link leaving the root, or any
/// absolute link, fails); elsewhere, or on kernels before 5.6, the real path (`realpath`) must lie
/// under the root's, and the file actually opened must be that path (so a link swapped in
/// between the check and the open is caught).
public struct HTTPStaticFileResponder: Sendable {
    /// The root's real path.
    public let root: String
    private let directory: RootDirectory

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
        self.directory = try RootDirectory(path: resolved)
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
    func open(rawPath: String) -> Result<(Int32, HTTPFileValidators, Substring), HTTPResponseError> {
        let path: String
        switch HTTPServedPath.relativePath(ofRawPath: rawPath) {
        case .failure(let error): return .failure(error)
        case .success(let value): path = value
        }
        let descriptor: Int32
        switch openBeneathRoot(path) {
        case .failure(let error): return .failure(error)
        case .success(let value): descriptor = value
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return .failure(HTTPResponseError(.notFound))
        }
        #if canImport(Darwin)
        let modified = status.st_mtimespec
        #else
        let modified = status.st_mtim
        #endif
        let nanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
        let validators = HTTPFileValidators(
            length: Int64(status.st_size),
            identity: .init(
                inode: UInt64(status.st_ino), size: Int64(status.st_size), modifiedNanoseconds: nanoseconds),
            lastModified: Int64(modified.tv_sec))
        let name = path.utf8.lastIndex(of: 0x2F).map { path[path.utf8.index(after: $0)...] } ?? path[...]
        return .success((descriptor, validators, name))
    }

    /// A strong tag from the inode, size and modification time: any rewrite changes one of them.
    static func entityTag(inode: UInt64, size: Int64, modified: Int64) -> EntityTag {
        HTTPFileValidators(
            length: size, identity: .init(inode: inode, size: size, modifiedNanoseconds: modified), lastModified: 0
        ).entityTag
    }

    private func openBeneathRoot(_ path: String) -> Result<Int32, HTTPResponseError> {
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK
        #if canImport(Glibc)
        if Self.kernelResolvesBeneath.load(ordering: .relaxed) {
            let descriptor = sk_open_beneath(directory.descriptor, path, flags)
            if descriptor >= 0 { return .success(descriptor) }
            switch errno {
            case EXDEV, ELOOP:
                return .failure(HTTPResponseError(.forbidden, message: "path leaves the served directory"))
            case EACCES:
                return .failure(HTTPResponseError(.forbidden))
            case ENOSYS, EPERM:
                // No openat2 (Linux before 5.6, or a seccomp filter): check by path from now on.
                Self.kernelResolvesBeneath.store(false, ordering: .relaxed)
            default:
                return .failure(HTTPResponseError(.notFound))
            }
        }
        #endif
        guard let resolved = Self.realPath(root + "/" + path) else {
            return .failure(HTTPResponseError(errno == EACCES ? .forbidden : .notFound))
        }
        // Bytes, not `hasPrefix`: String comparison treats canonically equivalent names (NFC and
        // NFD spellings of "é") as equal, while the file system keeps them apart.
        guard resolved.utf8.starts(with: (root + "/").utf8) else {
            return .failure(HTTPResponseError(.forbidden, message: "path leaves the served directory"))
        }
        let descriptor = openFile(resolved, flags | O_NOFOLLOW)
        guard descriptor >= 0 else { return .failure(HTTPResponseError(errno == EACCES ? .forbidden : .notFound)) }
        guard let opened = Self.path(of: descriptor), opened.utf8.elementsEqual(resolved.utf8) else {
            close(descriptor)
            return .failure(HTTPResponseError(.forbidden, message: "the file changed while it was opened"))
        }
        return .success(descriptor)
    }

    /// Whether `openat2` is available; cleared the first time the kernel says it is not.
    static let kernelResolvesBeneath = Atomic<Bool>(true)

    private func response(
        for request: HTTPServerRequest, descriptor: Int32, validators: HTTPFileValidators, name: Substring
    ) -> HTTPServerResponse {
        var headers: HTTPHeaders = [
            "Content-Type": HTTPMediaTypes.forFile(named: name),
            "Accept-Ranges": "bytes",
            "ETag": validators.entityTagHeaderValue,
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

/// The root directory, held open so that paths are resolved relative to it.
private final class RootDirectory: Sendable {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = openFile(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError.current("open", subject: path) }
    }

    deinit { close(descriptor) }
}

/// `open(2)` without a mode, named apart from the responder's own `open`.
private func openFile(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}
