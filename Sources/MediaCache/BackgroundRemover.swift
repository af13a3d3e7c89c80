import Foundation
import Synchronization

#if canImport(Glibc)
import CLinuxSystem
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread of the process, at the lowest CPU priority (nice 19), that unlinks the data files
/// the caches set aside, in order. Freeing a cached 1 GiB file's pages takes 75–300 ms of CPU;
/// on a pooled thread at normal priority it took a core from the request that needed the room
/// (a 2-core machine's whole-file cold first byte went from ~2 to ~7 ms while it ran).
final class BackgroundRemover: Sendable {
    static let shared = BackgroundRemover()
    /// The thread's name (at most 15 bytes on Linux).
    static let threadName = "sk-cache-remove"

    private let work = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            #if os(Linux)
            // Per thread on Linux: only this one runs niced.
            _ = sk_set_thread_nice(19)
            _ = sk_set_thread_name(BackgroundRemover.threadName)
            #endif
            while true {
                available.wait()
                let next = work.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                next?()
            }
        }
        thread.start()
    }

    /// Unlinks `paths`, in order, after everything enqueued before.
    func unlink(_ paths: [String]) {
        enqueue {
            for path in paths { _ = removeFile(path) }
        }
    }

    /// Returns once everything enqueued so far is done.
    func drained() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            enqueue { done.resume() }
        }
    }

    private func enqueue(_ item: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(item) }
        available.signal()
    }
}

private func removeFile(_ path: String) -> Int32 { unlink(path) }
