import Foundation
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitHTTPServer

/// Fifty ways of asking for a file outside the library; every one must be refused.
@Suite(.serialized) struct PathTraversalTests {
    static let secret = "TOP-SECRET-7c1e5d"

    /// Request targets (raw, nothing normalized) that try to leave the library.
    static let vectors: [String] = [
        "/library/item/../../secret.txt",
        "/library/item/../../../secret.txt",
        "/library/../secret.txt",
        "/library/item/%2e%2e/%2e%2e/secret.txt",
        "/library/item/%2E%2E/%2E%2E/secret.txt",
        "/library/item/..%2f..%2fsecret.txt",
        "/library/item/..%2F..%2Fsecret.txt",
        "/library/item/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/library/item/.%2e/.%2e/secret.txt",
        "/library/item/%2e./%2e./secret.txt",
        "/library/item/%252e%252e/%252e%252e/secret.txt",
        "/library/item/%252e%252e%252f%252e%252e%252fsecret.txt",
        "/library/item/..%252f..%252fsecret.txt",
        "/library/item/%25%32%65%25%32%65/%25%32%65%25%32%65/secret.txt",
        "/library/item/..\\..\\secret.txt",
        "/library/item/..%5c..%5csecret.txt",
        "/library/item/..%5C..%5Csecret.txt",
        "/library/item/%2e%2e%5c%2e%2e%5csecret.txt",
        "/library/item/..%255c..%255csecret.txt",
        "/library/item/index.m3u8%00.txt",
        "/library/item/%00/../../secret.txt",
        "/library/item/..%00/..%00/secret.txt",
        "/library/item/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt",
        "/library/item/%e0%80%ae%e0%80%ae/%e0%80%ae%e0%80%ae/secret.txt",
        "/library/item/..%c0%af..%c0%afsecret.txt",
        "/library/item/%ef%bc%8e%ef%bc%8e/%ef%bc%8e%ef%bc%8e/secret.txt",
        "/library/item/%u002e%u002e/%u002e%u002e/secret.txt",
        "/library/item/....//....//secret.txt",
        "/library/item/.../.../secret.txt",
        "/library/item/..;/..;/secret.txt",
        "/library/..%2fsecret.txt/x",
        "/library/%2e%2e/secret.txt",
        "/library/%2e%2e%2f%2e%2e%2fsecret.txt/x",
        "/library/..%2f..%2f/secret.txt",
        "/library/item/%2f..%2f..%2fsecret.txt",
        "/library/item/./../../secret.txt",
        "/library/item/../item/../../secret.txt",
        "/library/item/%2e/%2e%2e/%2e%2e/secret.txt",
        "/library/item/index.m3u8/../../../secret.txt",
        "/library/item/link-out",
        "/library/item/absolute-link",
        "/library/item/etc-link/passwd",
        "/library/dir-link/secret.txt",
        "/library/item/../../../../../../../../etc/passwd",
        "/library/item/..%2f..%2f..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/library/item/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fproc%2fself%2fenviron",
        "/library//etc/passwd",
        "/library/item/%2fetc%2fpasswd",
        "/library/item/%%32%65%%32%65/secret.txt",
        "http://127.0.0.1:PORT/library/item/../../secret.txt",
    ]

    @Test func thereAreFiftyVectors() {
        #expect(Self.vectors.count == 50)
        #expect(Set(Self.vectors).count == 50)
    }

    /// Runs every vector against a live server; checked both with the kernel resolving beneath
    /// the root (`openat2`) and with the realpath fallback that older kernels and Darwin use.
    @Test(arguments: [true, false])
    func everyVectorIsRefused(kernelResolution: Bool) async throws {
        let previous = HTTPStaticFileResponder.kernelResolvesBeneath.exchange(kernelResolution, ordering: .relaxed)
        defer { HTTPStaticFileResponder.kernelResolvesBeneath.store(previous, ordering: .relaxed) }

        let library = try LibraryServer.start { root in
            let base = root.deletingLastPathComponent()
            try Self.secret.write(to: base.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
            let item = root.appendingPathComponent("item")
            try write("#EXTM3U\n", "index.m3u8", in: item)
            let manager = FileManager.default
            try manager.createSymbolicLink(
                atPath: item.appendingPathComponent("link-out").path, withDestinationPath: "../../secret.txt")
            try manager.createSymbolicLink(
                atPath: item.appendingPathComponent("absolute-link").path,
                withDestinationPath: base.appendingPathComponent("secret.txt").path)
            try manager.createSymbolicLink(
                atPath: item.appendingPathComponent("etc-link").path, withDestinationPath: "/etc")
            try manager.createSymbolicLink(
                atPath: root.appendingPathComponent("dir-link").path, withDestinationPath: "..")
            try manager.createSymbolicLink(
                atPath: item.appendingPathComponent("inner-link.m3u8").path, withDestinationPath: "index.m3u8")
        }
        let port = library.port

        // Sanity: the library itself is served, links inside it too.
        #expect(try await library.get("/library/item/index.m3u8").text == "#EXTM3U\n")
        #expect(try await library.get("/library/item/inner-link.m3u8").text == "#EXTM3U\n")

        for vector in Self.vectors {
            let target = vector.replacingOccurrences(of: "PORT", with: "\(port)")
            let response = try await runBlocking { () -> RawHTTPResponse in
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
                return try connection.readResponse()
            }
            #expect([400, 403, 404].contains(response.status), "\(vector) answered \(response.status)")
            #expect(!response.text.contains(Self.secret), "\(vector) leaked the secret")
            #expect(!response.text.contains("root:x:0:0"), "\(vector) leaked /etc/passwd")
            #expect(!response.text.contains("PATH="), "\(vector) leaked an environment")
        }
        // Still serving after all that.
        #expect(try await library.get("/library/item/index.m3u8").status == 200)
        await library.stop()
    }
}
