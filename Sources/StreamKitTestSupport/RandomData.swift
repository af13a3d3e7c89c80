import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `count` random bytes, read from /dev/urandom straight into the array (no per-byte work: a
/// debug build must not keep one of the test process's few cooperative threads busy for long).
public func randomBytes(_ count: Int) -> [UInt8] {
    let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    precondition(descriptor >= 0, "cannot open /dev/urandom")
    defer { close(descriptor) }
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        var done = 0
        while done < count {
            let result = read(descriptor, buffer.baseAddress! + done, min(count - done, 16 << 20))
            precondition(result > 0, "reading /dev/urandom failed")
            done += result
        }
        initialized = count
    }
}

/// `count` random bytes written to `directory/name`; returns them.
@discardableResult
public func writeRandomFile(_ directory: URL, _ name: String, bytes count: Int) throws -> Data {
    let data = Data(randomBytes(count))
    try data.write(to: directory.appendingPathComponent(name))
    return data
}
