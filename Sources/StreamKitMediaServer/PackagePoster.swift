import Foundation

/// A package's poster for its player page: the cover the download fetched into the package
/// (`poster.jpg`, `poster.png` or `poster.webp`, the names the Downloads module writes), else what
/// ``MediaServer/Configuration/makePoster`` makes.
enum PackagePoster {
    /// The cover kept in the package in `folder`, if any.
    static func cover(in folder: String) -> String? {
        ["poster.jpg", "poster.png", "poster.webp"].lazy.map { folder + "/" + $0 }
            .first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// The media type of a poster file, by its extension.
    static func contentType(of path: String) -> String {
        if path.hasSuffix(".png") { return "image/png" }
        if path.hasSuffix(".webp") { return "image/webp" }
        return "image/jpeg"
    }
}
