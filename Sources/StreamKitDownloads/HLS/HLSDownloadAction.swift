import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

/// What a transfer worker does next.
enum WorkItem: Sendable, Hashable {
    /// Fetch the whole resource of a file.
    case whole(file: Int)
    /// Fetch `range` of a byte-range file's resource; it holds `units` segments and maps.
    case piece(file: Int, range: ByteRange, units: Int)

    var file: Int {
        switch self {
        case .whole(let file), .piece(let file, _, _): file
        }
    }
}

/// What ``HLSDownloadEngine`` does after a transition of ``HLSDownloadBookkeeping``, in order, with
/// the lock released.
enum HLSDownloadAction: Sendable, Equatable {
    /// Emit a progress event.
    case reportProgress
    /// Save package.json with the running status.
    case writeCheckpoint
    /// Give these items to the transfer workers.
    case enqueue([WorkItem])
    /// No more items will be queued: the workers end once the queue is empty.
    case finishQueue
    /// Every piece of a byte-range file has ended: move it into place. With `failure`, a file that
    /// ends as a gap gives that failure as the reason.
    case completeRangedFile(Int, failure: HLSDownloadError?)
    /// Log and report a file (or `bytes` of it) skipped under `--skip-broken`.
    case reportSkipped(path: String, url: String, bytes: ByteRange?, error: HLSDownloadError)
    /// End the download with `error`.
    case fail(HLSDownloadError)
}
