import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Which parts of a library changed since the last look, from inotify(7): the list of folders
/// (entries made, removed or renamed in the root) and the folders without a playlist (a file made
/// or renamed in one). A page of a library of ten thousand file downloads then looks into none of
/// them, where it looked into each (an `lstat` a folder) at every page.
///
/// Only what the watch reports reliably is trusted: when the kernel's queue overflowed, the root
/// itself moved, or a watch could not be made, the library looks as it did before the watch.
/// Elsewhere than Linux there is no watch.
final class LibraryFolderWatch: Sendable {
    /// What changed since the last ``changes()``.
    struct Changes {
        /// Whether the list of folders may have changed (read the root again).
        var listingChanged: Bool
        /// Folders, by name, in which something was made or renamed, or that went away.
        var touched: Set<String>
        /// Whether the rest can be trusted: false after an overflow or a lost root watch.
        var reliable: Bool
    }

    private struct State {
        /// Each watched folder's name by watch descriptor.
        var names: [Int32: String] = [:]
        /// The watch descriptor of each watched folder.
        var watches: [String: Int32] = [:]
        var rootWatch: Int32 = -1
        /// Whether the root itself was removed or moved: nothing the watch says holds any more.
        var rootLost = false
    }

    private let descriptor: Int32
    private let root: String
    private let state = Mutex(State())

    /// A watch of `root`, or `nil` where inotify is missing or its instances are used up.
    init?(root: String) {
        #if os(Linux)
        let opened = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard opened >= 0 else { return nil }
        let rootMask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
        let rootWatch = inotify_add_watch(opened, root, rootMask)
        guard rootWatch >= 0 else {
            close(opened)
            return nil
        }
        descriptor = opened
        self.root = root
        state.withLock { $0.rootWatch = rootWatch }
        #else
        return nil
        #endif
    }

    deinit {
        #if os(Linux)
        close(descriptor)
        #endif
    }

    /// Whether the folder `name` is watched.
    func isWatched(_ name: String) -> Bool { state.withLock { $0.watches[name] != nil } }

    /// Watches the folder `name` for a playlist made in it; `false` when no watch could be made
    /// (the user's watches are used up), and the folder is then looked into at every page.
    func watch(_ name: String) -> Bool {
        #if os(Linux)
        let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
        let watch = inotify_add_watch(descriptor, root + "/" + name, mask)
        guard watch >= 0 else { return false }
        state.withLock { state in
            // The same folder seen under another name (renamed) keeps its descriptor.
            if let old = state.names[watch], old != name { state.watches[old] = nil }
            state.names[watch] = name
            state.watches[name] = watch
        }
        return true
        #else
        return false
        #endif
    }

    /// Stops watching the folder `name` (it holds a playlist now: it is checked by its stamps).
    func unwatch(_ name: String) {
        #if os(Linux)
        guard
            let watch = state.withLock({ state -> Int32? in
                guard let watch = state.watches.removeValue(forKey: name) else { return nil }
                state.names[watch] = nil
                return watch
            })
        else { return }
        inotify_rm_watch(descriptor, watch)
        #endif
    }

    /// What changed since the last call, read from the kernel's queue without waiting.
    func changes() -> Changes {
        var changes = Changes(listingChanged: false, touched: [], reliable: true)
        #if os(Linux)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let header = MemoryLayout<inotify_event>.size
        state.withLock { state in
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                var offset = 0
                while offset + header <= count {
                    let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
                        (
                            bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                            bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                            Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        )
                    }
                    let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    offset += header + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        changes.reliable = false
                    } else if watch == state.rootWatch {
                        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { state.rootLost = true }
                        changes.listingChanged = true
                        if !name.isEmpty { changes.touched.insert(name) }
                    } else if let folder = state.names[watch] {
                        changes.touched.insert(folder)
                        if mask & UInt32(IN_IGNORED) != 0 {
                            state.names[watch] = nil
                            if state.watches[folder] == watch { state.watches[folder] = nil }
                        }
                    }
                }
            }
            if state.rootLost { changes.reliable = false }
        }
        #endif
        return changes
    }
}
