import StreamKitCore
import StreamKitHTTP

#if canImport(Glibc)
import CStreamKitLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Extended attributes (`user.*`) of a file: small records kept with the file itself, so that
/// they go wherever a rename takes it and vanish with it.
package enum ExtendedAttribute {
    package enum ReadResult: Equatable {
        /// There is no file at the path.
        case noFile
        /// The file has no such attribute (or the file system keeps none).
        case none
        case value([UInt8])
    }

    /// Sets attribute `name` on an open file.
    ///
    /// - Returns: False where the file system keeps no user attributes (or not this many bytes).
    package static func write(_ value: [UInt8], name: String, descriptor: Int32) -> Bool {
        value.withUnsafeBytes { bytes in
            #if canImport(Glibc)
            fsetxattr(descriptor, name, bytes.baseAddress, bytes.count, 0) == 0
            #else
            fsetxattr(descriptor, name, bytes.baseAddress, bytes.count, 0, 0) == 0
            #endif
        }
    }

    /// Sets attribute `name` on the file at `path`.
    ///
    /// - Returns: False where it cannot (no such file, no user attributes).
    package static func write(_ value: [UInt8], name: String, path: String) -> Bool {
        value.withUnsafeBytes { bytes in
            #if canImport(Glibc)
            setxattr(path, name, bytes.baseAddress, bytes.count, 0) == 0
            #else
            setxattr(path, name, bytes.baseAddress, bytes.count, 0, 0) == 0
            #endif
        }
    }

    /// Reads attribute `name` of the file at `path`.
    package static func read(name: String, path: String) -> ReadResult {
        #if canImport(Glibc)
        let size = getxattr(path, name, nil, 0)
        #else
        let size = getxattr(path, name, nil, 0, 0, 0)
        #endif
        guard size >= 0 else { return errno == ENOENT || errno == ENOTDIR ? .noFile : .none }
        var value = [UInt8](repeating: 0, count: size)
        #if canImport(Glibc)
        let count = value.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, size) }
        #else
        let count = value.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, size, 0, 0) }
        #endif
        guard count >= 0 else { return .none }
        return .value(Array(value.prefix(count)))
    }

    /// Removes attribute `name` from an open file, if it has it.
    package static func remove(name: String, descriptor: Int32) {
        #if canImport(Glibc)
        _ = fremovexattr(descriptor, name)
        #else
        _ = fremovexattr(descriptor, name, 0)
        #endif
    }
}

/// The resume record as an extended attribute of the partial file (`user.streamkit.resume`).
enum ResumeRecordAttribute {
    static let name = "user.streamkit.resume"

    /// Sets the attribute on an open file; false where the file system keeps no user attributes.
    static func write(_ value: [UInt8], descriptor: Int32) -> Bool {
        ExtendedAttribute.write(value, name: name, descriptor: descriptor)
    }

    /// Reads the attribute of the file at `path`.
    static func read(path: String) -> ExtendedAttribute.ReadResult {
        ExtendedAttribute.read(name: name, path: path)
    }

    /// Removes the attribute from an open file, if it has it.
    static func remove(descriptor: Int32) { ExtendedAttribute.remove(name: name, descriptor: descriptor) }
}

/// A file's strong ETag as an extended attribute (`user.streamkit.etag`): the version of the
/// resource a finished download holds, kept with the file itself so that it survives a crash
/// before any other record of it was written. Set before the file takes its final name.
public enum FileEntityTagAttribute {
    /// The attribute's name.
    public static let name = "user.streamkit.etag"

    /// Sets the attribute on an open file.
    ///
    /// - Returns: False where the file system keeps no user attributes.
    @discardableResult
    public static func set(_ tag: EntityTag, descriptor: Int32) -> Bool {
        ExtendedAttribute.write(Array(tag.headerValue.utf8), name: name, descriptor: descriptor)
    }

    /// Sets the attribute on the file at `path`.
    ///
    /// - Returns: False where it cannot (no such file, no user attributes).
    @discardableResult
    public static func set(_ tag: EntityTag, path: String) -> Bool {
        ExtendedAttribute.write(Array(tag.headerValue.utf8), name: name, path: path)
    }

    /// The attribute of the file at `path`.
    ///
    /// - Returns: The tag, or `nil` when the file has none (or not a valid one).
    public static func read(path: String) -> EntityTag? {
        guard case .value(let value) = ExtendedAttribute.read(name: name, path: path) else { return nil }
        return String(validating: value, as: UTF8.self).flatMap(EntityTag.init(headerValue:))
    }
}
