import Foundation
import Testing

@testable import StreamKitDownloads

/// A subscriber that does not read: its stream keeps every state change, in order, and only the
/// newest progress and speed of each task, so it stays small however long it lags.
struct DownloadEventStreamTests {
    static func task(_ id: String, _ state: DownloadState, bytes: Int64 = 0) -> DownloadTaskInfo {
        DownloadTaskInfo(
            id: id, queueID: 1, url: "http://127.0.0.1/\(id)", kind: .file, selection: nil, decrypt: false,
            fileType: .video, title: id, thumbnailURL: nil, state: state, progress: 0, bytesDone: bytes,
            bytesExpected: nil, bytesPerSecond: 0, postProcessingProgress: 0, lastError: nil,
            createdAt: Date(timeIntervalSince1970: 0), finishedAt: nil, location: "/tmp/\(id)", connections: 1,
            headers: [])
    }

    @Test func aSlowReaderGetsEveryStateChangeAndTheNewestProgress() async {
        let hub = DownloadEventHub()
        let stream = hub.subscribe(filter: nil)
        hub.emit(.stateChanged(Self.task("a", .running), from: .ready), task: nil)
        for bytes in 1...10_000 {
            hub.emit(.progress(Self.task("a", .running, bytes: Int64(bytes))), task: nil)
            hub.emit(.speed(id: "a", bytesPerSecond: Double(bytes)), task: nil)
            hub.emit(.progress(Self.task("b", .running, bytes: Int64(bytes))), task: nil)
            if bytes == 5_000 { hub.emit(.stateChanged(Self.task("b", .running), from: .ready), task: nil) }
        }
        hub.emit(.stateChanged(Self.task("a", .success), from: .running), task: nil)
        #expect(stream.buffer.pending <= 8, "\(stream.buffer.pending) events held")
        hub.close()
        var seen: [String] = []
        for await event in stream {
            switch event {
            case .stateChanged(let info, let from): seen.append("\(info.id):\(from)>\(info.state)")
            case .progress(let info): seen.append("\(info.id):progress \(info.bytesDone)")
            case .speed(let id, let speed): seen.append("\(id):speed \(Int(speed))")
            default: seen.append("other")
            }
        }
        #expect(
            seen == [
                "a:ready>running", "a:progress 10000", "a:speed 10000", "b:progress 5000", "b:ready>running",
                "b:progress 10000", "a:running>success",
            ], "\(seen)")
    }

    /// A reader that keeps up sees every event; one cancelled while it waits gets the end.
    @Test func aReaderThatKeepsUpSeesEveryEventAndCancellingEndsTheWait() async {
        let hub = DownloadEventHub()
        let stream = hub.subscribe(filter: "a")
        let reader = Task {
            var count = 0
            for await event in stream {
                if case .progress = event { count += 1 }
                if count == 100 { break }
            }
            return count
        }
        for bytes in 1...100 {
            while stream.buffer.pending > 0 { await Task.yield() }
            hub.emit(.progress(Self.task("a", .running, bytes: Int64(bytes))), task: nil)
            hub.emit(.progress(Self.task("b", .running, bytes: Int64(bytes))), task: nil)
        }
        #expect(await reader.value == 100)
        let waiting = Task { await stream.buffer.next() }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        #expect(await waiting.value == nil)
        hub.close()
    }
}
