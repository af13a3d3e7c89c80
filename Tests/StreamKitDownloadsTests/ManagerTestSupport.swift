import Foundation
import StreamKitCore
import StreamKitHTTPClient
import StreamKitTestSupport
import Synchronization
import Testing

@testable import StreamKitDownloads

#if canImport(Glibc)
import Glibc
#endif

/// Records a manager's events as they come, for tests that check their order.
final class EventRecorder: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[DownloadEvent]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    init(_ stream: DownloadEventStream) {
        let store = store
        task = Task {
            for await event in stream { store.events.withLock { $0.append(event) } }
        }
    }

    deinit { task.cancel() }

    var all: [DownloadEvent] { store.events.withLock { $0 } }

    /// The events without progress and speed (whose count depends on timing).
    var milestones: [String] { all.compactMap(Self.describe) }

    func clear() { store.events.withLock { $0 = [] } }

    /// Waits until `predicate` holds for the events so far.
    func wait(
        timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
        _ predicate: ([DownloadEvent]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !predicate(all) {
            if ContinuousClock.now > deadline {
                Issue.record("timed out; events: \(milestones)", sourceLocation: sourceLocation)
                throw TestSupportError("timed out waiting for events")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the milestones contain `expected` in a row, then returns them up to its end
    /// (later events, such as another task finishing meanwhile, are not part of the answer, so a
    /// poll that comes late cannot miss the moment).
    @discardableResult
    func waitMilestones(
        endingWith expected: [String], timeout: Duration = .seconds(30),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        try await wait(timeout: timeout, sourceLocation: sourceLocation) { events in
            Self.end(of: expected, in: events.compactMap(Self.describe)) != nil
        }
        let all = milestones
        return Array(all[..<(Self.end(of: expected, in: all) ?? all.endIndex)])
    }

    /// The index just past the first run of `expected` in `milestones`.
    private static func end(of expected: [String], in milestones: [String]) -> Int? {
        guard !expected.isEmpty, milestones.count >= expected.count else { return nil }
        for start in 0...(milestones.count - expected.count)
        where Array(milestones[start..<start + expected.count]) == expected {
            return start + expected.count
        }
        return nil
    }

    /// Waits until the task `id` is in `state`.
    func wait(for id: String, _ state: DownloadState, timeout: Duration = .seconds(60)) async throws {
        try await wait(timeout: timeout) { events in
            events.contains { event in
                if case .stateChanged(let info, _) = event { return info.id == id && info.state == state }
                return false
            }
        }
    }

    /// `added`, `preparing>stopped`, `completed`, `postProcessing`, `failed:kind`, `removed`, `allCompleted`.
    static func describe(_ event: DownloadEvent) -> String? {
        switch event {
        case .added: "added"
        case .stateChanged(let info, let from): "\(from)>\(info.state)"
        case .progress, .speed, .current: nil
        case .postProcessing(_, let fraction): "post:\(fraction)"
        case .completed: "completed"
        case .failed(_, let error): "failed:\(error.kind)"
        case .allCompleted: "allCompleted"
        case .removed: "removed"
        case .indexWriteFailed(let error): "indexWriteFailed:\(error.kind)"
        }
    }
}

enum ManagerSupport {
    /// A manager on a new directory with fast backoff and saves.
    static func manager(
        directory: URL? = nil, runsTasks: Bool = true, connections: Int = 4, failures: Int = 3,
        faults: WriteFaultInjector? = nil, networkRoot: URL = URL(fileURLWithPath: "/")
    ) async throws -> DownloadManager {
        let directory = try directory ?? TestRun.makeTemporaryDirectory("manager")
        return try await DownloadManager(
            configuration: DownloadManagerConfiguration(
                directory: directory, runsTasks: runsTasks,
                fileOptions: RangedFileOptions(
                    connections: connections, minimumSteal: 16 << 10, maximumConsecutiveFailures: failures,
                    initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(100),
                    saveInterval: .milliseconds(200), writeFaults: faults),
                hlsRetry: HTTPClientRetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(20)),
                persistInterval: .milliseconds(200), hostRetryDelay: .milliseconds(250),
                hostRetryMaximumDelay: .seconds(2), requirementCheckInterval: .milliseconds(200),
                networkRoot: networkRoot))
    }

    /// The `Range` requests nginx logged for `uri` (once its log settled), as byte ranges
    /// (`bytes=a-b`, `bytes=a-` to the end).
    static func requestedRanges(_ origin: Nginx, uri: String, length: Int64) async throws -> [ByteRange?] {
        try await origin.settledAccessLog().filter { $0.uri == uri && $0.method == "GET" }.map { entry in
            guard let range = entry.range, range.hasPrefix("bytes=") else { return nil }
            let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let first = Int64(parts[0]) else { return nil }
            let last = Int64(parts[1]) ?? (length - 1)
            return ByteRange(first, min(length, last + 1))
        }
    }
}
