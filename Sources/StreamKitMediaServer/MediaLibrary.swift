import Foundation
import StreamKitCore
import StreamKitHTTPServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One downloaded item in the library: a folder holding an HLS package.
public struct MediaLibraryItem: Hashable, Sendable {
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

    /// The path of the playlist on the server, percent-encoded.
    public var playPath: String { "/library/" + MediaLibrary.encodePathComponent(id) + "/" + entry }
}

/// The offline library: a directory whose subfolders are downloaded items, each with an
/// `index.m3u8`. Until the download manager keeps an index, the folders are the library.
public struct MediaLibrary: Sendable {
    /// The playlist that makes a folder an item.
    public static let entryName = "index.m3u8"

    /// The library directory's real path.
    public let root: String

    /// The library at `root`, which must be a directory.
    ///
    /// - Throws: ``SystemError`` when `root` is not a directory.
    public init(root: String) throws {
        self.root = try HTTPStaticFileResponder(root: root).root
    }

    /// The items, sorted by title: every folder (not hidden, not leading outside the library
    /// through a link) holding an `index.m3u8`.
    public func items() throws -> [MediaLibraryItem] {
        let fileManager = FileManager.default
        var items: [MediaLibraryItem] = []
        for name in try fileManager.contentsOfDirectory(atPath: root) where !name.hasPrefix(".") {
            let folder = root + "/" + name
            guard let real = Self.realPath(folder), real.utf8.starts(with: (root + "/").utf8) else { continue }
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                continue
            }
            let entry = folder + "/" + Self.entryName
            guard fileManager.fileExists(atPath: entry, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            let record = Self.packageRecord(in: folder)
            items.append(
                MediaLibraryItem(
                    id: name, title: record?.displayTitle ?? name, state: record?.displayState ?? "downloaded",
                    size: Self.size(ofFolder: folder),
                    duration: Self.duration(ofPlaylist: entry, in: folder), entry: Self.entryName))
        }
        return items.sorted { $0.title.lowercased() < $1.title.lowercased() }
    }

    /// What the page reads from a package's `package.json` (written by the Downloads module).
    struct PackageRecord: Decodable {
        var title: String?
        var source: String?
        var status: String?

        var displayTitle: String? {
            if let title, !title.isEmpty { return title }
            guard let source, let components = URLComponents(string: source), let host = components.host else {
                return nil
            }
            return host + (components.port.map { ":\($0)" } ?? "") + components.path
        }

        var displayState: String {
            switch status {
            case nil, "complete": "downloaded"
            case "completeWithGaps": "downloaded, with gaps"
            case "cancelled": "stopped"
            case let other?: other
            }
        }
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

    private static func size(ofFolder folder: String) -> Int64 {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return 0 }
        var total: Int64 = 0
        while enumerator.nextObject() != nil {
            let attributes = enumerator.fileAttributes
            if attributes?[.type] as? FileAttributeType == .typeRegular {
                total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        return total
    }

    /// The sum of `EXTINF` durations; for a multivariant playlist, those of its first variant.
    static func duration(ofPlaylist path: String, in folder: String, depth: Int = 0) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        var total = 0.0
        var sawSegment = false
        var variantFollows = false
        for line in lines {
            if line.hasPrefix("#EXTINF:") {
                let value = line.dropFirst("#EXTINF:".count).prefix { $0 != "," }
                if let seconds = Double(value) {
                    total += seconds
                    sawSegment = true
                }
            } else if line.hasPrefix("#EXT-X-STREAM-INF") {
                variantFollows = true
            } else if variantFollows && !line.isEmpty && !line.hasPrefix("#") {
                // A relative URI inside the folder only; anything else is not ours to read.
                guard depth == 0, !line.contains("://"), !line.hasPrefix("/"),
                    !line.split(separator: "/").contains("..")
                else { return nil }
                return duration(ofPlaylist: folder + "/" + line, in: folder, depth: depth + 1)
            }
        }
        return sawSegment ? total : nil
    }
}
