#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small files replaced whole: records, manifests, playlists; each 0600 (``PrivateFiles``).
public enum AtomicFile {
    /// Writes `bytes` to `temporaryPath`, then renames it to `path`, so that a reader (or a run
    /// after the process was killed) sees the old file or the new one, never a torn one.
    ///
    /// There is no `fsync`: the page cache outlives a killed process, and every caller checks
    /// what it reads back (lengths, decoding) to survive a power loss. Foundation's atomic write
    /// syncs each file, which cost a sync per HLS segment.
    ///
    /// - Throws: ``SystemError`` naming the call and the file; the temporary file is removed.
    public static func write(_ bytes: some Sequence<UInt8>, to path: String, temporaryPath: String) throws(SystemError)
    {
        let contents = Array(bytes)
        do {
            try write(to: path, temporaryPath: temporaryPath) { emit in emit(contents) }
        } catch let error as SystemError {
            throw error
        } catch {
            preconditionFailure("only a SystemError can be thrown: \(error)")
        }
    }

    /// Writes what `produce` hands to its `emit` function, chunk by chunk, to `temporaryPath`,
    /// then renames it to `path`, as ``write(_:to:temporaryPath:)`` does: a large document (a
    /// package manifest of a million segments) never has to sit in memory whole.
    ///
    /// After a failed write the remaining chunks are dropped; the error is thrown once `produce`
    /// returns. When `produce` throws, nothing is renamed.
    ///
    /// - Throws: ``SystemError`` naming the call and the file, or what `produce` threw; the
    ///   temporary file is removed.
    public static func write(
        to path: String, temporaryPath: String, produce: (_ emit: ([UInt8]) -> Void) throws -> Void
    ) throws {
        let descriptor = PrivateFiles.open(temporaryPath, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError.current("open", subject: temporaryPath) }
        var failure: (any Error)?
        do {
            try produce { chunk in
                guard failure == nil else { return }
                chunk.withUnsafeBytes { buffer in
                    var done = 0
                    while done < buffer.count {
                        let written = writeSome(descriptor, buffer.baseAddress! + done, buffer.count - done)
                        if written < 0 {
                            if errno == EINTR { continue }
                            failure = SystemError.current("write", subject: temporaryPath)
                            return
                        }
                        done += written
                    }
                }
            }
        } catch {
            if failure == nil { failure = error }
        }
        if close(descriptor) != 0, failure == nil { failure = SystemError.current("close", subject: temporaryPath) }
        if failure == nil, rename(temporaryPath, path) != 0 { failure = SystemError.current("rename", subject: path) }
        if let failure {
            unlink(temporaryPath)
            throw failure
        }
    }
}

extension AtomicFile {
    /// Writes `bytes` to `path` through a temporary file next to it, named `path`, a random part
    /// and `temporarySuffix`: one of its own, so that two writers of one file never write into the
    /// same temporary file (one's rename would take the other's half-written bytes).
    ///
    /// - Throws: ``SystemError`` naming the call and the file; the temporary file is removed.
    public static func write(
        _ bytes: some Sequence<UInt8>, to path: String, temporarySuffix: String
    ) throws(SystemError) {
        let unique = "." + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try write(bytes, to: path, temporaryPath: path + unique + temporarySuffix)
    }

    /// ``write(to:temporaryPath:produce:)`` through a temporary file of its own, as
    /// ``write(_:to:temporarySuffix:)`` names it.
    public static func write(
        to path: String, temporarySuffix: String, produce: (_ emit: ([UInt8]) -> Void) throws -> Void
    ) throws {
        let unique = "." + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try write(to: path, temporaryPath: path + unique + temporarySuffix, produce: produce)
    }
}

/// `write(2)`, named apart from ``AtomicFile/write(_:to:temporaryPath:)``.
private func writeSome(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
