import Foundation
import StreamKitTestSupport
import Testing

/// curl against the media server: ranges, validators, HEAD, keep-alive, HTTP/1.0, refusals.
@Suite(.requires(.curl)) struct CurlTests {
    static let size = 300_000

    private func start() throws -> (LibraryServer, Data) {
        let data = Data((0..<Self.size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        let library = try LibraryServer.start { root in
            let item = root.appendingPathComponent("item")
            try write("#EXTM3U\n#EXTINF:2,\nseg0.ts\n", "index.m3u8", in: item)
            try data.write(to: item.appendingPathComponent("seg0.ts"))
        }
        return (library, data)
    }

    /// Runs curl; returns the response headers (from `-D -`) and the body written to a file.
    private func curl(_ arguments: [String]) async throws -> (headers: String, body: Data, stderr: String) {
        let output = try TestRun.makeTemporaryDirectory("curl").appendingPathComponent("body")
        let result = try await Tool.curl.run(["-s", "-S", "-D", "-", "-o", output.path] + arguments)
        let body = (try? Data(contentsOf: output)) ?? Data()
        return (result.standardOutput, body, result.standardError)
    }

    private func header(_ name: String, in headers: String) -> String? {
        headers.split(separator: "\r\n").last { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    @Test func rangesArePartialContent() async throws {
        let (library, data) = try start()
        let url = "http://127.0.0.1:\(library.port)/library/item/seg0.ts"
        let first = try await curl(["-r", "0-99", url])
        #expect(first.headers.hasPrefix("HTTP/1.1 206 Partial Content\r\n"))
        #expect(header("Content-Range", in: first.headers) == "bytes 0-99/\(Self.size)")
        #expect(header("Content-Length", in: first.headers) == "100")
        #expect(sameBytes(first.body, data.prefix(100)))
        let middle = try await curl(["-r", "1000-200999", url])
        #expect(sameBytes(middle.body, data[1000..<201_000]))
        let suffix = try await curl(["-r", "-100", url])
        #expect(header("Content-Range", in: suffix.headers) == "bytes \(Self.size - 100)-\(Self.size - 1)/\(Self.size)")
        #expect(sameBytes(suffix.body, data.suffix(100)))
        let open = try await curl(["-r", "299990-", url])
        #expect(sameBytes(open.body, data.suffix(10)))
        let several = try await curl(["-r", "0-1,5-6", url])
        #expect(several.headers.hasPrefix("HTTP/1.1 200 OK\r\n") && sameBytes(several.body, data))
        let unsatisfiable = try await curl(["-r", "400000-", url])
        #expect(unsatisfiable.headers.hasPrefix("HTTP/1.1 416 Range Not Satisfiable\r\n"))
        #expect(header("Content-Range", in: unsatisfiable.headers) == "bytes */\(Self.size)")
        await library.stop()
    }

    @Test func headAndValidators() async throws {
        let (library, data) = try start()
        let url = "http://127.0.0.1:\(library.port)/library/item/seg0.ts"
        let head = try await curl(["-I", url])
        #expect(head.headers.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(String(decoding: head.body, as: UTF8.self) == head.headers, "with -I curl writes the head only")
        #expect(header("Content-Length", in: head.headers) == "\(Self.size)")
        #expect(header("Content-Type", in: head.headers) == "video/mp2t")
        #expect(header("Accept-Ranges", in: head.headers) == "bytes")
        let tag = try #require(header("ETag", in: head.headers))
        let modified = try #require(header("Last-Modified", in: head.headers))

        let unchanged = try await curl(["-H", "If-None-Match: \(tag)", url])
        #expect(unchanged.headers.hasPrefix("HTTP/1.1 304 Not Modified\r\n") && unchanged.body.isEmpty)
        let sinceDate = try await curl(["-H", "If-Modified-Since: \(modified)", url])
        #expect(sinceDate.headers.hasPrefix("HTTP/1.1 304"))
        let stale = try await curl(["-H", "If-None-Match: \"stale\"", url])
        #expect(stale.headers.hasPrefix("HTTP/1.1 200") && sameBytes(stale.body, data))
        let resume = try await curl(["-r", "100-", "-H", "If-Range: \(tag)", url])
        #expect(resume.headers.hasPrefix("HTTP/1.1 206") && sameBytes(resume.body, data.dropFirst(100)))
        await library.stop()
    }

    @Test func curlReusesTheConnectionAndSpeaksHTTP10() async throws {
        let (library, data) = try start()
        let base = "http://127.0.0.1:\(library.port)/library/item/"
        let second = try TestRun.makeTemporaryDirectory("curl").appendingPathComponent("second")
        let both = try await curl(["-v", base + "index.m3u8", "-o", second.path, base + "seg0.ts"])
        #expect(both.stderr.contains("Re-using existing connection"), "\(both.stderr)")
        #expect(String(decoding: both.body, as: UTF8.self) == "#EXTM3U\n#EXTINF:2,\nseg0.ts\n")
        #expect(sameBytes(try Data(contentsOf: second), data))
        let old = try await curl(["-0", base + "seg0.ts"])
        #expect(old.headers.hasPrefix("HTTP/1.1 200 OK\r\n") && sameBytes(old.body, data))
        #expect(header("Connection", in: old.headers) == "close")
        await library.stop()
    }

    @Test func curlIsRefusedOutsideTheLibraryAndForAnotherHost() async throws {
        let (library, _) = try start()
        let port = library.port
        let traversal = try await curl(["--path-as-is", "http://127.0.0.1:\(port)/library/item/../../secret.txt"])
        #expect(traversal.headers.hasPrefix("HTTP/1.1 403"))
        let rebinding = try await curl(["-H", "Host: evil.example:\(port)", "http://127.0.0.1:\(port)/"])
        #expect(rebinding.headers.hasPrefix("HTTP/1.1 421 Misdirected Request"))
        let viaLocalhost = try await curl(["http://localhost:\(port)/"])
        #expect(viaLocalhost.headers.hasPrefix("HTTP/1.1 200"))
        await library.stop()
    }
}
