import Foundation
import StreamKitCore
import StreamKitHLS
import StreamKitHTTPServer
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One downloaded item in the library: a folder holding an HLS package.
public struct MediaLibraryItem: Hashable, Sendable, Codable {
    /// The folder's name, which is the item's id in URLs (`/library/ID/index.m3u8`).
    public let id: String
    /// What the page shows: the title a package records (`package.json`'s `title`), else its
    /// source URL without the scheme, else the folder name.
    public let title: String
    /// Where the download stands, from `package.json`'s `status` (`downloaded` without one).
    public let state: String
    /// Bytes of every file in the folder.
    public let size: Int64
    /// The playlist's duration in seconds (the sum of `EXTINF`), when it could be read.
    public let duration: Double?
    /// The playlist a player opens, relative to the folder.
    public let entry: String
    /// The package's MPEG-DASH MPD over the same files (`manifest.mpd`), when it has one (a
    /// package downloaded from DASH).
    public var dashEntry: String? = nil

    /// The path of the playlist on the server, percent-encoded.
    public var playPath: String { "/library/" + MediaLibrary.encodePathComponent(id) + "/" + entry }

    /// The path of the MPD on the server, percent-encoded, when there is one.
    public var dashPlayPath: String? {
        dashEntry.map { "/library/" + MediaLibrary.encodePathComponent(id) + "/" + $0 }
    }
}

/// The offline library: a directory whose subfolders are downloaded items, each with an
/// `index.m3u8`. Until the download manager keeps an index, the folders are the library.
public struct MediaLibrary: Sendable {
    /// The playlist that makes a folder an item.
    public static let entryName = "index.m3u8"
    /// The MPD a package downloaded from DASH has beside its playlist.
    public static let dashEntryName = "manifest.mpd"

    /// The library directory's real path.
    public let root: String
    /// Each folder's item as last worked out, with what it was worked out from.
    private let known = KnownItems()

    /// Where the known items are kept between runs, if anywhere.
    private let rememberedItemsFile: String?

    final class KnownItems: Sendable {
        /// Held for a whole look at the library: two pages at once would each take part of the
        /// watch's news, and the later one could store a folder as without a playlist after the
        /// earlier one saw its playlist come.
        let look = Mutex(())
        let items = Mutex<[String: KnownItem]>([:])
        /// Folders seen without a playlist, with their stamp then: while it stays the same no file
        /// was made in the folder, and the playlist is not looked for again (a library of ten
        /// thousand file downloads cost twenty thousand lookups a page, half of them misses).
        let bare = Mutex<[String: FileStamp]>([:])
        /// The root's folder names as last read; read again when the watch says they changed.
        let listing = Mutex<[String]?>(nil)
        private let watch = Mutex<(tried: Bool, watch: LibraryFolderWatch?)>((false, nil))
        /// When every folder was last looked into, whatever the watch said.
        let lastFullLook = Mutex<ContinuousClock.Instant?>(nil)

        /// The watch of the library at `root`, made at the first call (`nil` without inotify, or
        /// when the library was made without one).
        func folderWatch(root: String) -> LibraryFolderWatch? {
            watch.withLock { made in
                if !made.tried { made = (true, LibraryFolderWatch(root: root)) }
                return made.watch
            }
        }

        func disableWatch() { watch.withLock { $0 = (true, nil) } }
        /// Whether `items` changed since it was last saved.
        let changed = Atomic<Bool>(false)
    }

    /// An item and the state of the files it was read from: while they stay the same, so does
    /// the item (a library of a thousand packages is read again at every page load).
    struct KnownItem: Sendable, Codable {
        let stamp: [FileStamp]
        let item: MediaLibraryItem
    }

    /// The library at `root`, which must be a directory.
    ///
    /// - Parameters:
    ///   - rememberedItemsFile: A file in which the items worked out are kept between runs, with
    ///     the state of the files each was read from: the first page of a new process then reads
    ///     again only the items whose files changed (a thousand packages took 2.3 s to read whole).
    ///     Written when items change; an unreadable one is ignored.
    ///   - watchesFolders: Whether the folders are watched for change (inotify, on Linux), so
    ///     that a page looks only into the folders that changed; every folder is still looked into
    ///     every ten seconds, for file systems whose changes made elsewhere are not reported (NFS).
    ///     `false`: every folder is looked into at every call.
    /// - Throws: ``SystemError`` when `root` is not a directory.
    public init(root: String, rememberedItemsFile: String? = nil, watchesFolders: Bool = true) throws {
        self.root = try HTTPStaticFileResponder(root: root).root
        self.rememberedItemsFile = rememberedItemsFile
        if !watchesFolders { known.disableWatch() }
        if let rememberedItemsFile, let remembered = Self.readRemembered(from: rememberedItemsFile, root: self.root) {
            known.items.withLock { $0 = remembered }
        }
    }

    /// The items, sorted by title: every folder (not hidden, not leading outside the library
    /// through a link) holding an `index.m3u8`.
    public func items() throws -> [MediaLibraryItem] {
        try known.look.withLock { _ in try lookedUpItems() }
    }

    private func lookedUpItems() throws -> [MediaLibraryItem] {
        var items: [MediaLibraryItem] = []
        var bare: [String: FileStamp] = [:]
        let knownBare = known.bare.withLock { $0 }
        // The watch is read before the root: whatever changes after this look is in the next.
        let watch = known.folderWatch(root: root)
        let changes = watch?.changes()
        let now = ContinuousClock.now
        let lastFullLook = known.lastFullLook.withLock { $0 }
        let trusted = changes?.reliable == true && lastFullLook.map { $0.duration(to: now) < .seconds(10) } == true
        if !trusted { known.lastFullLook.withLock { $0 = now } }
        let names: [String]
        if trusted, changes?.listingChanged == false, let listing = known.listing.withLock({ $0 }) {
            names = listing
        } else {
            names = try FileManager.default.contentsOfDirectory(atPath: root).filter { !$0.hasPrefix(".") }
            known.listing.withLock { $0 = names }
        }
        // Without a watch, a folder changed in the last second may change again within the same
        // tick of its clock without a new stamp: it is looked into again until it has been still
        // for a second.
        let settled = Int64(Date().timeIntervalSince1970 - 1) * 1_000_000_000
        for name in names {
            // A watched folder without a playlist, where nothing was made since: still without one.
            if trusted, let stamp = knownBare[name], changes?.touched.contains(name) == false,
                watch?.isWatched(name) == true
            {
                bare[name] = stamp
                continue
            }
            let folder = root + "/" + name
            var status = stat()
            guard lstat(folder, &status) == 0 else { continue }
            let isLink = status.st_mode & S_IFMT == S_IFLNK
            if isLink {
                // A link counts only when it leads to a folder inside the library.
                guard let real = Self.realPath(folder), real.utf8.starts(with: (root + "/").utf8),
                    stat(folder, &status) == 0
                else { continue }
            }
            guard status.st_mode & S_IFMT == S_IFDIR else { continue }
            let folderStamp = FileStamp(status)
            if watch == nil || isLink, knownBare[name] == folderStamp {
                bare[name] = folderStamp
                continue
            }
            let entry = folder + "/" + Self.entryName
            var entryStamp = FileStamp(entry)
            if entryStamp?.isRegularFile != true, !isLink, let watch, watch.watch(name) {
                // Looked at again once watched: a playlist made between the two looks is seen
                // now, one made later is reported.
                entryStamp = FileStamp(entry)
                if entryStamp?.isRegularFile == true { watch.unwatch(name) }
            }
            guard let entryStamp, entryStamp.isRegularFile else {
                if watch?.isWatched(name) == true || max(folderStamp.modified, folderStamp.changed) < settled {
                    bare[name] = folderStamp
                }
                continue
            }
            items.append(item(named: name, in: folder, entry: entry, stamps: [folderStamp, entryStamp]))
        }
        // Folders removed since are forgotten: a server that runs for months keeps only what is there.
        known.bare.withLock { $0 = bare }
        let present = Set(items.map(\.id))
        known.items.withLock { known in
            if known.count > present.count {
                known = known.filter { present.contains($0.key) }
                self.known.changed.store(true, ordering: .relaxed)
            }
        }
        if let rememberedItemsFile, known.changed.exchange(false, ordering: .relaxed) {
            saveRemembered(to: rememberedItemsFile)
        }
        return items.sorted { $0.title.lowercased() < $1.title.lowercased() }
    }

    /// The folder's item, read again only when what it is read from changed since the last time:
    /// the folder, its playlist, and its `package.json` (rewritten at every checkpoint of a
    /// download) or, for a folder that has none, each folder inside it (files are renamed into
    /// place, which changes the folder holding them).
    private func item(named name: String, in folder: String, entry: String, stamps: [FileStamp]) -> MediaLibraryItem {
        let stamp = stamps + Self.contentStamp(of: folder)
        if let known = known.items.withLock({ $0[name] }), known.stamp == stamp { return known.item }
        let record = Self.packageRecord(in: folder)
        let item = MediaLibraryItem(
            id: name, title: Self.title(record: record, entry: entry, folderName: name),
            state: record?.displayState ?? "downloaded",
            size: Self.size(ofFolder: folder), duration: Self.duration(ofPlaylist: entry, in: folder),
            entry: Self.entryName,
            dashEntry: FileStamp(folder + "/" + Self.dashEntryName)?.isRegularFile == true ? Self.dashEntryName : nil)
        known.items.withLock { $0[name] = KnownItem(stamp: stamp, item: item) }
        known.changed.store(true, ordering: .relaxed)
        return item
    }

    /// Removes the item `id` with its files: its folder is renamed aside at once (a hidden name,
    /// which no page lists) and deleted in the background.
    ///
    /// - Returns: Whether there was such an item.
    /// - Throws: ``SystemError`` when the folder cannot be moved.
    public func remove(_ id: String) throws -> Bool {
        guard !id.isEmpty, !id.hasPrefix("."), !id.contains("/") else { return false }
        let aside: String? = try known.look.withLock { _ in
            guard try lookedUpItems().contains(where: { $0.id == id }) else { return nil }
            let aside = root + "/.removed-" + UUID().uuidString
            guard rename(root + "/" + id, aside) == 0 else { throw SystemError.current("rename", subject: id) }
            known.items.withLock { $0[id] = nil }
            known.listing.withLock { $0 = nil }
            known.lastFullLook.withLock { $0 = nil }
            known.changed.store(true, ordering: .relaxed)
            return aside
        }
        guard let aside else { return false }
        Task.detached(priority: .utility) { try? FileManager.default.removeItem(atPath: aside) }
        return true
    }

    /// What ``rememberedItemsFile`` holds: the library's root (items of another root are not
    /// taken) and each folder's known item.
    private struct Remembered: Codable {
        /// How items were made: a file of another format is not taken (its titles were URLs).
        static let currentFormat = 2
        var format: Int?
        var root: String
        var items: [String: KnownItem]
    }

    private static func readRemembered(from path: String, root: String) -> [String: KnownItem]? {
        guard let data = FileManager.default.contents(atPath: path),
            let remembered = try? JSONDecoder().decode(Remembered.self, from: data), remembered.root == root,
            remembered.format == Remembered.currentFormat
        else { return nil }
        return remembered.items
    }

    /// Saves the known items; a failure only costs the next process a slower first page.
    private func saveRemembered(to path: String) {
        let remembered = Remembered(format: Remembered.currentFormat, root: root, items: known.items.withLock { $0 })
        guard let data = try? JSONEncoder().encode(remembered) else { return }
        try? AtomicFile.write(data, to: path, temporaryPath: path + ".\(getpid()).tmp")
    }

    /// Reads every item once, so that the first page does not wait for it.
    public func warmUp() {
        _ = try? items()
    }

    /// What the page reads from a package's `package.json` (written by the Downloads module).
    struct PackageRecord: Decodable {
        var title: String?
        var source: String?
        var status: String?

        var displayState: String {
            switch status {
            case nil, "complete": "downloaded"
            case "completeWithGaps": "downloaded, with gaps"
            case "cancelled": "stopped"
            case let other?: other
            }
        }
    }

    /// The title the page shows, never a URL: the one given (`queue add --title`), else the
    /// source's `EXT-X-SESSION-DATA` `com.apple.hls.title` (kept in the package's playlist), else a
    /// name from the source URL's path (``name(fromURL:)``), else the folder's name.
    static func title(record: PackageRecord?, entry: String, folderName: String) -> String {
        if let title = record?.title, !title.isEmpty { return title }
        if let title = sessionTitle(ofPlaylist: entry) { return title }
        return record?.source.flatMap(name(fromURL:)) ?? folderName
    }

    /// The `com.apple.hls.title` session data of the multivariant playlist at `path`, if it has one.
    static func sessionTitle(ofPlaylist path: String) -> String? {
        // Only a playlist naming the data is parsed: most are media playlists, some long.
        guard let data = FileManager.default.contents(atPath: path),
            data.firstRange(of: Data("com.apple.hls.title".utf8)) != nil,
            let multivariant = (try? Playlist.parse(data))?.playlist.multivariant
        else { return nil }
        let value = multivariant.sessionData.first { $0.dataID == "com.apple.hls.title" && $0.value != nil }?.value
        return value.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Names a playlist file does not say anything with: the folder above names the show.
    private static let genericNames: Set<String> = [
        "index", "master", "playlist", "prog_index", "manifest", "chunklist", "main", "stream", "media", "live",
        "hls", "video", "output", "out",
    ]

    /// The last part of `url`'s path that names something (`show` in
    /// `https://example.com/show/master.m3u8?token=1`), without its extension, percent-decoded; the
    /// host when no part does.
    static func name(fromURL url: String) -> String? {
        guard let components = URLComponents(string: url) else { return nil }
        for part in components.path.split(separator: "/").reversed() {
            var stem = Substring(part)
            if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = stem[..<dot] }
            let name = String(stem).removingPercentEncoding ?? String(stem)
            if !name.isEmpty, !genericNames.contains(name.lowercased()) { return name }
        }
        return components.host
    }

    static func packageRecord(in folder: String) -> PackageRecord? {
        guard let data = FileManager.default.contents(atPath: folder + "/package.json") else { return nil }
        return try? JSONDecoder().decode(PackageRecord.self, from: data)
    }

    /// `component` percent-encoded for one path segment.
    static func encodePathComponent(_ component: String) -> String {
        var result = ""
        for byte in component.utf8 {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E:
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return result
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Bytes of the regular files below `folder`, read with `fstatat` (Foundation's enumerator
    /// builds an attribute dictionary per file). Links are not followed.
    static func size(ofFolder folder: String, depth: Int = 0) -> Int64 {
        guard depth < 16, let directory = opendir(folder) else { return 0 }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var total: Int64 = 0
        while let entry = readdir(directory) {
            guard let name = Self.name(of: entry) else { continue }
            var status = stat()
            guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFREG: total += Int64(status.st_size)
            case S_IFDIR: total += size(ofFolder: folder + "/" + name, depth: depth + 1)
            default: break
            }
        }
        return total
    }

    /// A directory entry's name; `nil` for `.` and `..`.
    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String? {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return name == "." || name == ".." ? nil : name
    }

    /// The part of an item's stamp that tells whether its files changed: `package.json` when
    /// there is one, else each folder inside it in name order.
    static func contentStamp(of folder: String) -> [FileStamp] {
        if let record = FileStamp(folder + "/package.json") { return [record] }
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var inner: [(String, FileStamp)] = []
        while let entry = readdir(directory) {
            guard let name = Self.name(of: entry), let stamp = FileStamp(folder + "/" + name), stamp.isDirectory
            else { continue }
            inner.append((name, stamp))
        }
        return inner.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The sum of `EXTINF` durations; for a multivariant playlist, those of its first variant.
    static func duration(ofPlaylist path: String, in folder: String, depth: Int = 0) -> Double? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        // A scan of the bytes: a library page reads a thousand playlists, and splitting them into
        // Swift strings and trimming each line with Foundation cost most of that.
        let extinf = Array("#EXTINF:".utf8)
        let streamInf = Array("#EXT-X-STREAM-INF".utf8)
        var total = 0.0
        var sawSegment = false
        var variantFollows = false
        var result: Double?? = nil
        Array(data).withUnsafeBufferPointer { bytes in
            var lineStart = 0
            while lineStart < bytes.count, result == nil {
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != 0x0A, bytes[lineEnd] != 0x0D { lineEnd += 1 }
                var start = lineStart
                var end = lineEnd
                while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
                while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                lineStart = lineEnd + 1
                if line.starts(with: extinf) {
                    let value = line.dropFirst(extinf.count).prefix { $0 != UInt8(ascii: ",") }
                    if let seconds = Double(String(decoding: value, as: UTF8.self)) {
                        total += seconds
                        sawSegment = true
                    }
                } else if line.starts(with: streamInf) {
                    variantFollows = true
                } else if variantFollows, let first = line.first, first != UInt8(ascii: "#") {
                    // A relative URI inside the folder only; anything else is not ours to read.
                    let uri = String(decoding: line, as: UTF8.self)
                    guard depth == 0, !uri.contains("://"), !uri.hasPrefix("/"),
                        !uri.split(separator: "/").contains("..")
                    else {
                        result = .some(nil)
                        return
                    }
                    result = .some(duration(ofPlaylist: folder + "/" + uri, in: folder, depth: depth + 1))
                }
            }
        }
        if let result { return result }
        return sawSegment ? total : nil
    }
}

/// A file's identity and last change, as `stat` gives them.
struct FileStamp: Hashable, Sendable, Codable {
    let mode: UInt32
    let inode: UInt64
    let size: Int64
    let modified: Int64
    let changed: Int64

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }

    init(_ status: stat) {
        mode = UInt32(status.st_mode)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
    }
}
