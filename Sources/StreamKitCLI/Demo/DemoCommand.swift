import Foundation
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitMediaServer

/// `streamkit demo`: the whole product on this machine, with no network and no arguments.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show StreamKit working end to end on this machine, with no network.",
        discussion: """
            Starts an origin on 127.0.0.1 serving the sample stream that ships with StreamKit (a \
            master playlist with a 320x180 variant, a 640x360 AES-128 variant and an English audio \
            rendition, ten seconds), adds it to a fresh download queue in a temporary folder and runs \
            it with live progress, serves the offline copy, fetches its playlists, keys and every segment \
            back through the local server and checks them byte for byte against the origin, plays \
            the stream through the caching proxy (/proxy/hls) and checks that too, downloads the same \
            video and audio as DASH (an MPD) through the queue and checks every file its package's \
            manifest.mpd names, stops the origin and fetches them all again (the copies from disk, \
            the stream from the cache), and decodes both copies with ffprobe when it is installed. \
            Each step prints what it verified; any failure \
            exits 1. With --serve it keeps serving the copy and the cached stream until Ctrl-C.
            """,
        examples: [
            .init("Run the demo", "streamkit demo"),
            .init("Run it, then keep serving the offline copy", "streamkit demo --serve"),
        ],
        group: "Getting started")

    @Flag(help: "Keep serving the offline copy and the cached stream after the demo, until Ctrl-C.") var serve = false
    @Option(valueName: "dir", help: "Where to put the demo's library (default: a new temporary folder, removed after).")
    var home: String?
    @Flag(help: "Keep the temporary folder instead of removing it.") var keep = false

    init() {}

    func run(_ context: CommandContext) async throws {
        let demo: DemoRun
        do {
            demo = try DemoRun(context: context, home: home, keep: keep || serve || home != nil)
        } catch let failure as DemoFailure {
            context.writeError("error: \(failure.message)\n")
            throw ExitCode.failure
        } catch {
            context.writeError("error: the demo cannot start: \(error)\n")
            throw ExitCode.failure
        }
        do {
            try await demo.run(serveAfterwards: serve)
        } catch let failure as DemoFailure {
            context.writeError("error: \(failure.message)\n")
            await demo.tearDown()
            throw ExitCode.failure
        } catch let code as ExitCode {
            await demo.tearDown()
            throw code
        }
        await demo.tearDown()
    }
}

/// A step of the demo that did not verify.
struct DemoFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
