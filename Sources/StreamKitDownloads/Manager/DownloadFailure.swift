import StreamKitHTTPClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a failed attempt of a task's runner was, for ``DownloadFailurePolicy``.
enum DownloadFailure: Hashable, Sendable {
    /// The task was stopped or removed, or the manager closed.
    case cancelled
    /// Another attempt may cure it (connect, reset, timeouts, truncation, 408, 429, 5xx).
    case transient
    /// Trying again cannot fix it; the task fails with an error of this kind.
    case permanent(DownloadManagerError.Kind)
    /// No connection to the origin host (refused, unreachable, no such name, connect timeout):
    /// after a few tries the task waits for the host instead of failing.
    case unreachable

    /// The client's errors that say the host did not answer at all.
    static let unreachableKinds: Set<HTTPClientError.Kind> = [.couldNotResolveHost, .connectFailed, .connectTimeout]

    /// The HLS engine's error kinds that no new run of the engine can fix.
    static let permanentHLSKinds: Set<HLSDownloadError.Kind> = [
        .invalidPlaylist, .noMatchingVariant, .noMatchingRendition, .unsupportedURI, .tooManySegments,
        .packageConflict, .writeFailed, .decryptionFailed, .invalidKey, .invalidSegmentFilter,
    ]

    /// A request of a progressive file's connection failed.
    ///
    /// - Parameters:
    ///   - error: Why it failed.
    ///   - taskCancelled: Whether the runner's task is cancelled.
    init(_ error: HTTPClientError, taskCancelled: Bool) {
        if error.kind == .cancelled || taskCancelled {
            self = .cancelled
        } else if Self.unreachableKinds.contains(error.kind) {
            self = .unreachable
        } else {
            self = HTTPClientRetryPolicy.isRetryable(error) ? .transient : .permanent(.transfer)
        }
    }

    /// A run of the HLS engine failed. A write that failed for lack of space is `diskFull`, told
    /// by the `errno` of the failing write, never by the words of the message.
    ///
    /// - Parameters:
    ///   - error: Why it failed.
    ///   - taskCancelled: Whether the runner's task is cancelled.
    init(_ error: HLSDownloadError, taskCancelled: Bool) {
        if taskCancelled || error.kind == .cancelled {
            self = .cancelled
        } else if let underlying = error.underlying, Self.unreachableKinds.contains(underlying.kind) {
            self = .unreachable
        } else if Self.permanentHLSKinds.contains(error.kind) {
            let diskFull = error.kind == .writeFailed && Self.isDiskFull(errno: error.errno)
            self = .permanent(diskFull ? .diskFull : .transfer)
        } else {
            self = .transient
        }
    }

    /// Whether a write that failed with `errno` found the disk, or the user's quota, full.
    static func isDiskFull(errno code: Int32?) -> Bool { code == ENOSPC || code == EDQUOT }

    /// The kind of error for a downloaded byte that could not be written: `diskFull` when `errno`
    /// says so, else `fileSystem`.
    static func writeFailureKind(errno code: Int32) -> DownloadManagerError.Kind {
        isDiskFull(errno: code) ? .diskFull : .fileSystem
    }
}
