// The StreamKit side of bench/hls-parse.sh: parse a playlist with the HLS module.
//
//     bench-hls-parse FILE             parse once, print the segment count (for bench/measure.py)
//     bench-hls-parse --runs N FILE    also time N parses (and resolving the segments) in process, print JSON
//     bench-hls-parse --runs N --parse-only FILE   the same without resolving (for profiling)
import Foundation
import StreamKitHLS

@main
enum BenchHLSParse {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var runs = 0
        if arguments.count >= 2, arguments[0] == "--runs", let count = Int(arguments[1]) {
            runs = count
            arguments.removeFirst(2)
        }
        var resolve = true
        if arguments.first == "--parse-only" {
            resolve = false
            arguments.removeFirst()
        }
        guard let path = arguments.first, let data = FileManager.default.contents(atPath: path) else {
            FileHandle.standardError.write(Data("usage: bench-hls-parse [--runs N] FILE\n".utf8))
            exit(64)
        }
        if runs == 0 {
            let parsed = try Playlist.parse(data)
            print(parsed.playlist.media?.segments.count ?? parsed.playlist.multivariant?.variants.count ?? 0)
            return
        }
        let clock = ContinuousClock()
        var parseTimes: [Double] = []
        var resolveTimes: [Double] = []
        var count = 0
        for _ in 0..<runs {
            let start = clock.now
            let parsed = try Playlist.parse(data)
            let parsedAt = clock.now
            let resolved =
                resolve
                ? parsed.playlist.media?.resolvedSegments(baseURL: "https://cdn.example.com/vod/index.m3u8").count
                : parsed.playlist.media?.segments.count
            let resolvedAt = clock.now
            count = resolved ?? 0
            parseTimes.append(seconds(parsedAt - start))
            resolveTimes.append(seconds(resolvedAt - parsedAt))
        }
        parseTimes.sort()
        resolveTimes.sort()
        let result: [String: Any] = [
            "label": "streamkit in process", "segments": count, "bytes": data.count, "runs": runs,
            "parse_min_s": rounded(parseTimes[0]), "parse_median_s": rounded(parseTimes[runs / 2]),
            "resolve_min_s": rounded(resolveTimes[0]),
            "mb_per_s": (Double(data.count) / 1e6 / parseTimes[0] * 10).rounded() / 10,
        ]
        let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }
}
