import Foundation
import StreamKitHTTPClient

/// Tasks that wait for their origin host, and the tries that bring them back.
extension DownloadManager {
    /// The `host:port` a task's requests go to (the scheme's port when none is written).
    static func hostKey(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let port = components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(host):\(port)"
    }

    /// `id` could not reach its host: it waits, and so does every ready task for the same host,
    /// which would only fail the same way; one probe tries the host until it answers.
    func waitForHost(_ id: String, _ error: DownloadManagerError) throws(DownloadManagerError) {
        guard let info = tasks[id], let host = Self.hostKey(info.url) else {
            try fail(id, error)
            return
        }
        try setWaiting(id, reason: error.detail)
        for other in allTasks() where other.state == .ready && Self.hostKey(other.url) == host {
            try setWaiting(other.id, reason: "waiting for \(host), which did not answer task \(id)")
        }
        startProbe(host, url: info.url)
    }

    private func setWaiting(_ id: String, reason: String) throws(DownloadManagerError) {
        guard var info = tasks[id] else { return }
        info.lastError = reason
        tasks[id] = info
        try move(id, to: .waiting)
    }

    /// Tries `host` (a HEAD of `url`: any answer will do) after pauses that double from
    /// ``DownloadManagerConfiguration/hostRetryDelay`` up to its maximum, until it answers.
    private func startProbe(_ host: String, url: String) {
        guard hostProbes[host] == nil, !closed else { return }
        let first = configuration.hostRetryDelay
        let longest = configuration.hostRetryMaximumDelay
        hostProbes[host] = Task {
            var delay = first
            while !Task.isCancelled {
                try? await Task.sleep(for: delay)
                if Task.isCancelled { return }
                if await self.answers(url) {
                    self.hostAnswered(host)
                    return
                }
                delay = min(longest, delay * 2)
            }
        }
    }

    /// Whether the host of `url` answers at all (whatever the status).
    private func answers(_ url: String) async -> Bool {
        guard let client = try? activeClient() else { return false }
        do {
            _ = try await client.head(of: url, retry: .none)
            return true
        } catch let error as HTTPClientError {
            return !DownloadFailure.unreachableKinds.contains(error.kind)
        } catch {
            return false
        }
    }

    /// The host answers: its waiting tasks are queued again, in queue order.
    private func hostAnswered(_ host: String) {
        hostProbes[host] = nil
        for info in allTasks() where info.state == .waiting && Self.hostKey(info.url) == host {
            do {
                try move(info.id, to: .ready, clearingError: true)
            } catch {
                // Only a task removed meanwhile: nothing to queue.
            }
        }
        schedule()
    }
}
