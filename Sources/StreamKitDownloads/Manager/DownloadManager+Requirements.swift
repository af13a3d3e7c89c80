import Foundation
import StreamKitCore

/// Tasks that wait for free space or for a network that is not cellular, and the checks that
/// bring them back.
extension DownloadManager {
    /// Why `info` cannot run now (``DownloadRequirements/unmet(_:)``), or `nil`.
    func unmetRequirement(_ info: DownloadTaskInfo) -> String? {
        let host = URLComponents(string: info.url)?.host ?? ""
        var facts = DownloadRequirements.Facts(space: FileSystemSpace.of(info.location), host: host)
        // The route matters only when cellular access is off (and a name to resolve costs time).
        if !requirements.allowsCellularAccess {
            let routes = NetworkRoutes(root: configuration.networkRoot)
            if let interface = routes.interface(toward: host) {
                facts.interface = interface
                facts.interfaceIsCellular = routes.isCellular(interface)
            }
        }
        return requirements.unmet(facts)
    }

    /// `id` cannot run for `reason`: it waits, and is checked again every
    /// ``DownloadManagerConfiguration/requirementCheckInterval`` until it can.
    func waitForRequirement(_ id: String, _ reason: String) throws(DownloadManagerError) {
        guard var info = tasks[id] else { return }
        info.lastError = reason
        tasks[id] = info
        try move(id, to: .waiting)
        requirementWaiters.insert(id)
        guard requirementWatch == nil, !closed else { return }
        let interval = configuration.requirementCheckInterval
        requirementWatch = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled || self.recheckRequirements() { return }
            }
        }
    }

    /// Queues again the waiting tasks whose requirements now hold.
    ///
    /// - Returns: Whether no task waits for a requirement any more (the watch then ends).
    @discardableResult
    func recheckRequirements() -> Bool {
        for id in requirementWaiters {
            guard let info = tasks[id], info.state == .waiting else {
                requirementWaiters.remove(id)
                continue
            }
            guard unmetRequirement(info) == nil else { continue }
            requirementWaiters.remove(id)
            do {
                try move(id, to: .ready, clearingError: true)
            } catch {
                // Only a task removed meanwhile: nothing to queue.
            }
        }
        schedule()
        guard requirementWaiters.isEmpty else { return false }
        requirementWatch?.cancel()
        requirementWatch = nil
        return true
    }

    /// Lets tasks run, or not, while the route to their origin is cellular; saved for the next
    /// manager on the directory.
    public func setAllowsCellularAccess(_ allowed: Bool) throws(DownloadManagerError) {
        requirements.allowsCellularAccess = allowed
        try index.setSetting("allowsCellular", allowed ? "1" : "0")
        recheckRequirements()
    }

    /// Sets the free space a task's file system must keep for it to start (`nil`: the smaller of
    /// 256 MiB and 1% of the file system); saved for the next manager on the directory.
    public func setFreeSpaceFloor(_ bytes: Int64?) throws(DownloadManagerError) {
        if let bytes, bytes < 0 {
            throw DownloadManagerError(.invalidArgument, "the free-space floor cannot be negative")
        }
        requirements.freeSpaceFloor = bytes
        try index.setSetting("freeSpaceFloor", bytes.map(String.init))
        recheckRequirements()
    }

    /// Whether tasks may run over a cellular interface (default `true`).
    public var allowsCellularAccess: Bool { requirements.allowsCellularAccess }

    /// The free space a task's file system must keep, or `nil` for the default rule.
    public var freeSpaceFloor: Int64? { requirements.freeSpaceFloor }
}
