import Foundation
import StreamKitCore

/// The player page of one package (`/watch/ID`): a `<video>` on the package's playlist (played by
/// the browser's own HLS support), its title, duration and size, the variants and the audio and
/// subtitle renditions it holds, the playlist's URL and the command that plays it elsewhere. Its
/// style and script are files of this server (`/static/…`), so that the page runs under
/// `Content-Security-Policy: default-src 'self'`: nothing inline, nothing from elsewhere.
enum WatchPage {
    /// The policy the page and its files are sent with.
    static let contentSecurityPolicy = "default-src 'self'"

    /// The page; `offersMP4` adds the "Download as MP4" link (``MediaServer/Configuration/exportMP4``).
    static func html(
        item: MediaLibraryItem, tracks: PackageTracks, offersMP4: Bool = false, hasPoster: Bool = false
    ) -> String {
        let escape = LibraryPage.escape
        var facts = [LibraryPage.formatSize(item.size), item.state]
        if let duration = item.duration { facts.insert(LibraryPage.formatDuration(duration), at: 0) }
        var details = ""
        if !tracks.variants.isEmpty {
            let rows = tracks.variants.map { variant in
                let words = [variant.resolution, formatRate(variant.bandwidth), variant.codecs]
                return "<li>" + escape(words.compactMap { $0 }.joined(separator: ", ")) + "</li>"
            }
            details += "<h2>Variants</h2>\n<ul>\n" + rows.joined(separator: "\n") + "\n</ul>\n"
        }
        for (heading, renditions) in [("Audio", tracks.audio), ("Subtitles", tracks.subtitles)]
        where !renditions.isEmpty {
            let rows = renditions.map { rendition in
                "<li>" + escape(rendition.name + (rendition.language.map { " (\($0))" } ?? "")) + "</li>"
            }
            details += "<h2>\(heading)</h2>\n<ul>\n" + rows.joined(separator: "\n") + "\n</ul>\n"
        }
        let playlist = escape(item.playPath)
        return """
            <!doctype html>
            <html lang="en">
            \(PageAssets.head(title: escape(item.title) + " · StreamKit", scripts: ["watch.js"]))
            <body>
            <nav><a href="/">Library</a></nav>
            <main>
            <h1>\(escape(item.title))</h1>
            <video id="player" controls preload="metadata" src="\(playlist)"\
            \(hasPoster ? " poster=\"/watch/\(escape(MediaLibrary.encodePathComponent(item.id)))/poster\"" : "") aria-label="\(escape(item.title))"></video>
            <p id="support" role="status" hidden>This browser does not play HLS itself. Open \
            <a href="\(playlist)">the playlist</a> in a player, or run <code>streamkit play</code> on its URL.</p>
            <p id="failed" role="status" hidden>The browser could not play this package: open \
            <a href="\(playlist)">the playlist</a> in a player.</p>
            <p>\(escape(facts.joined(separator: " · ")))</p>
            \(details)<p>Playlist: <a href="\(playlist)">\(playlist)</a></p>
            \(offersMP4 ? "<p><a href=\"/watch/\(escape(MediaLibrary.encodePathComponent(item.id)))/video.mp4\" download>Download as MP4</a></p>" : "")
            </main>
            </body>
            </html>

            """
    }

    /// `title` as a file name a `Content-Disposition` header can carry: printable ASCII without
    /// quotes, slashes or backslashes (others become `_`), at most 100 characters.
    static func fileName(for title: String) -> String {
        let name = String(
            title.unicodeScalars.prefix(100).map { scalar in
                (0x20..<0x7F).contains(scalar.value) && !"\"/\\".unicodeScalars.contains(scalar)
                    ? Character(scalar) : "_"
            })
        return name.trimmingCharacters(in: .whitespaces).isEmpty ? "video" : name
    }

    /// `800 kbit/s`, `2.5 Mbit/s`: a variant's peak bandwidth.
    static func formatRate(_ bitsPerSecond: Int) -> String {
        guard bitsPerSecond >= 1_000_000 else { return "\(bitsPerSecond / 1000) kbit/s" }
        let tenths = (bitsPerSecond + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) Mbit/s"
    }
}
