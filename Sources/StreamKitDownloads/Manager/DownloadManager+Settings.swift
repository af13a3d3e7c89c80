import Foundation
import StreamKitCore
import StreamKitHTTPClient

/// The manager's settings, saved in the index for the next manager on the directory.
extension DownloadManager {
    /// Sets how many tasks run at once, 1...16. Lowering it sends the
    /// tasks over the limit (the latest in queue order) back to `ready`; raising it starts more.
    ///
    /// - Throws: ``DownloadManagerError`` `invalidArgument` outside 1...16.
    public func setMaximumConcurrentDownloads(_ count: Int) throws(DownloadManagerError) {
        guard (1...16).contains(count) else {
            throw DownloadManagerError(.invalidArgument, "maximumConcurrentDownloads must be 1...16, got \(count)")
        }
        maximumConcurrentDownloads = count
        try index.setSetting("maxConcurrent", String(count))
        for id in scheduler.tasksOverLimit(queue: queueEntries) {
            try move(id, to: .ready)
            runners[id]?.cancel()
        }
        schedule()
    }

    /// Sets whether added tasks start at once, saved for the next manager on the directory.
    public func setAutoStart(_ value: Bool) throws(DownloadManagerError) {
        autoStart = value
        try index.setSetting("autoStart", value ? "1" : "0")
    }

    /// Sets where new tasks are stored. Existing tasks stay where they are and stay in the index
    /// (each task records its own location), so nothing is moved, lost or left unindexed; only
    /// tasks added afterwards go to `directory`.
    public func setDownloadDirectory(_ directory: URL) throws(DownloadManagerError) {
        do {
            try PrivateFiles.createDirectory(directory.path)
        } catch {
            throw DownloadManagerError(.fileSystem, "cannot create \(directory.path): \(error)")
        }
        downloadDirectory = directory
        try index.setSetting("downloadDirectory", directory.path)
    }

    /// Limits all tasks together to `bytesPerSecond` (`nil`: no limit). Tasks started afterwards
    /// use the limit; running tasks are restarted (they resume where they are) so that it applies
    /// at once.
    public func setBandwidthLimit(_ bytesPerSecond: Int64?) async throws(DownloadManagerError) {
        if let bytesPerSecond, bytesPerSecond < 1 {
            throw DownloadManagerError(.invalidArgument, "the bandwidth limit must be at least 1 byte a second")
        }
        bandwidthLimit = bytesPerSecond
        try index.setSetting("bandwidthLimit", bytesPerSecond.map(String.init))
        // The next task to run makes a client with the new limit.
        let previous = client
        client = nil
        let running = allTasks().filter { $0.state == .running }
        for info in running {
            try move(info.id, to: .ready)
            runners[info.id]?.cancel()
        }
        for info in running { await runners[info.id]?.value }
        schedule()
        await previous?.shutdown()
    }

    /// The settings as they are.
    public var settings: DownloadQueueSettings {
        DownloadQueueSettings(
            downloadDirectory: downloadDirectory.path, maximumConcurrentDownloads: maximumConcurrentDownloads,
            autoStart: autoStart, bandwidthLimit: bandwidthLimit, allowsCellularAccess: allowsCellularAccess,
            freeSpaceFloor: freeSpaceFloor)
    }

    /// Applies the settings `change` gives, each saved for the next manager on the directory.
    ///
    /// - Throws: ``DownloadManagerError``: `invalidArgument` for a value out of range (nothing
    ///   is changed then), `fileSystem` for a directory that cannot be made.
    public func configure(_ change: DownloadQueueSettings) async throws(DownloadManagerError) {
        if let count = change.maximumConcurrentDownloads, !(1...16).contains(count) {
            throw DownloadManagerError(.invalidArgument, "maximumConcurrentDownloads must be 1...16, got \(count)")
        }
        if let limit = change.bandwidthLimit, limit < 0 {
            throw DownloadManagerError(.invalidArgument, "the bandwidth limit cannot be negative")
        }
        if let directory = change.downloadDirectory {
            try setDownloadDirectory(URL(fileURLWithPath: directory, isDirectory: true))
        }
        if let autoStart = change.autoStart { try setAutoStart(autoStart) }
        if let count = change.maximumConcurrentDownloads { try setMaximumConcurrentDownloads(count) }
        if let limit = change.bandwidthLimit { try await setBandwidthLimit(limit == 0 ? nil : limit) }
        if let allowed = change.allowsCellularAccess { try setAllowsCellularAccess(allowed) }
        if let floor = change.freeSpaceFloor { try setFreeSpaceFloor(floor < 0 ? nil : floor) }
    }
}
