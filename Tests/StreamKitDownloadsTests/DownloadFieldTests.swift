import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

/// File tasks on a link that breaks: connections reset mid-body by a relay in front of nginx.
@Suite(.serialized, .requires(.nginx)) struct DownloadFieldTests {
    /// The first response, the one that tells the length and whether ranges work, is reset
    /// mid-body, and so is the next connection: both are retried under the failure policy like
    /// any other response, and the task ends `success` with the origin's bytes, on one connection
    /// and on four. Every request after a cut resumes where the bytes on disk end: none asks for
    /// byte 0 again.
    @Test(arguments: [1, 4]) func aResetFirstResponseIsRetriedAndResumes(connections: Int) async throws {
        let size = 3 << 20
        let origin = try await StaticOrigin.start(files: ["movie.mp4": size], limitRate: 2 << 20)
        let relay = try TCPRelay(upstreamPort: origin.nginx.port) { index in
            index < 2 ? (512 << 10) >> index : nil
        }
        let manager = try await ManagerSupport.manager(connections: connections, failures: 3)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(
            DownloadRequest(url: "http://127.0.0.1:\(relay.port)/movie.mp4", kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains { event in
                guard case .stateChanged(let changed, _) = event, changed.id == info.id else { return false }
                return changed.state == .success || changed.state == .failed
            }
        }
        let final = try #require(await manager.info(info.id))
        #expect(final.state == .success, "\(final.lastError ?? "no error")")
        #expect(relay.cutCount == 2)
        if final.state == .success {
            #expect(try Data(contentsOf: URL(fileURLWithPath: final.location)) == Data(origin.files["movie.mp4"]!))
        }
        let requests = try await origin.nginx.settledAccessLog().filter { $0.uri == "/movie.mp4" }
        let fromZero = requests.filter { $0.range == nil || $0.range?.hasPrefix("bytes=0-") == true }
        #expect(fromZero.count == 1, "\(requests)")
        await manager.close()
        await relay.stop()
        await origin.stop()
    }

    /// A server that ignores `Range` resets the whole-file answer mid-body: the task asks again
    /// after the policy's wait, takes the new whole answer from byte 0, and ends `success`.
    @Test func aResetWholeFileAnswerIsFetchedAgain() async throws {
        let size = 2 << 20
        let origin = try await StaticOrigin.start(files: ["movie.mp4": size], limitRate: 2 << 20, honourRange: false)
        let relay = try TCPRelay(upstreamPort: origin.nginx.port) { $0 == 0 ? 700 << 10 : nil }
        let manager = try await ManagerSupport.manager(connections: 4, failures: 3)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(
            DownloadRequest(url: "http://127.0.0.1:\(relay.port)/movie.mp4", kind: .file), autoStart: true)
        try await recorder.wait { events in
            events.contains { event in
                guard case .stateChanged(let changed, _) = event, changed.id == info.id else { return false }
                return changed.state == .success || changed.state == .failed
            }
        }
        let final = try #require(await manager.info(info.id))
        #expect(final.state == .success, "\(final.lastError ?? "no error")")
        #expect(relay.cutCount == 1)
        if final.state == .success {
            #expect(try Data(contentsOf: URL(fileURLWithPath: final.location)) == Data(origin.files["movie.mp4"]!))
        }
        let requests = try await origin.nginx.settledAccessLog().filter { $0.uri == "/movie.mp4" }
        #expect(requests.count == 2 && requests.allSatisfy { $0.status == 200 }, "\(requests)")
        await manager.close()
        await relay.stop()
        await origin.stop()
    }
}
