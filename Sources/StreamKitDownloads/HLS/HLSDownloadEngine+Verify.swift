import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

/// What the server says of a completed file's resource, against the ETag recorded when it was fetched.
enum CompletedFileCheck: Sendable, Hashable {
    /// The server still has the resource with the recorded ETag.
    case unchanged
    /// The server has the resource with another ETag: the file on disk is not what it serves now.
    case changed
    /// The server could not vouch for it (an error status, no ETag): the file is kept on its length.
    case unverified(reason: String)
    /// The server did not answer (no connection, or a status worth retrying: 408, 429, 5xx): the
    /// files left to check are kept on their lengths too, without asking (a package resumed while
    /// its server is down must not wait for a check per file).
    case unreachable(reason: String)

    /// The check of a server's answer: `status` and the `current` ETag it gave.
    static func judging(status: HTTPStatus, current: EntityTag?, recorded: EntityTag) -> CompletedFileCheck {
        if HTTPClientRetryPolicy.isRetryable(status: status) { return .unreachable(reason: "HTTP \(status.rawValue)") }
        guard status.isSuccess else { return .unverified(reason: "HTTP \(status.rawValue)") }
        guard let current else { return .unverified(reason: "no ETag in the answer") }
        if current.strongMatches(recorded) { return .unchanged }
        // The same tag made weak (a server compressing on the fly, say): equal content, maybe not
        // equal bytes; not a change.
        if current.weakMatches(recorded) { return .unverified(reason: "a weak ETag") }
        return .changed
    }
}

/// Where each planned file stands on disk as a run starts, before the bookkeeping takes it: a
/// state per file in chunks, and the byte-range progress of the few files made of ranges. An
/// array of (state, range progress) pairs took 100 bytes a file, and twice that while it grew.
struct ReconciledFiles: Sendable {
    private(set) var states = ChunkedArray<FileState>()
    private(set) var ranged: [Int: RangedFileState] = [:]

    mutating func append(_ outcome: (FileState, RangedFileState?)) {
        if let progress = outcome.1 { ranged[states.count] = progress }
        states.append(outcome.0)
    }

    subscript(index: Int) -> (FileState, RangedFileState?) {
        get { (states[index], ranged[index]) }
        set {
            states[index] = newValue.0
            ranged[index] = newValue.1
        }
    }
}

extension HLSDownloadEngine {
    /// A resource and the ETag its files were fetched with (files of one resource fetched at
    /// different times may hold different versions).
    struct CheckedResource: Hashable, Sendable {
        var url: String
        var tag: EntityTag
    }

    /// Checks the files an earlier run completed against the server before this run counts them:
    /// one HEAD request per resource and recorded strong ETag (a GET of its first byte when the
    /// server refuses HEAD: 403, 405, 501), at most ``HLSDownloadOptions/connections`` at once,
    /// each tried once. Nothing is downloaded for a file that is unchanged; one whose resource
    /// changed is fetched again (the old file stays in place until the new one replaces it). The
    /// first check the server does not answer ends the checking: the rest are kept on their
    /// lengths. Not checked: a package whose last run completed it (running the command again on
    /// it asks the server nothing, so it works offline), and live recordings (their early
    /// segments have left the server's window).
    ///
    /// - Returns: How many files the server confirmed, and how many changed.
    func verifyCompleted(
        _ outcomes: inout ReconciledFiles, files: ChunkedArray<PlannedFile>,
        records: [String: PackageManifest.File], status: PackageStatus?
    ) async -> (verified: Int, changed: Int) {
        guard options.verifiesCompletedFiles, status != .complete, !state.withLock({ $0.live }) else { return (0, 0) }
        var resources: [CheckedResource: [Int]] = [:]
        for (index, fileState) in outcomes.states.enumerated() {
            guard case .done(_, let recorded?) = fileState, files[index].kind != .key,
                let tag = EntityTag(headerValue: recorded), !tag.isWeak
            else { continue }
            resources[CheckedResource(url: files[index].url, tag: tag), default: []].append(index)
        }
        guard !resources.isEmpty else { return (0, 0) }
        let checks = await check(Array(resources.keys))
        var verified = 0
        var changed = 0
        var kept: [(path: String, reason: String)] = []
        for (resource, check) in checks {
            guard let indices = resources.removeValue(forKey: resource) else { continue }
            switch check {
            case .unchanged:
                verified += indices.count
            case .changed:
                changed += indices.count
                logger.info("\(resource.url) changed on the server since it was fetched: fetching it again")
                for index in indices {
                    outcomes[index] = reconcile(files[index], record: records[files[index].path], keepingFinal: false)
                }
            case .unverified(let reason), .unreachable(let reason):
                for index in indices { kept.append((files[index].path, reason)) }
            }
        }
        // One line each, not one per file: a server refusing every check would flood the output.
        if let first = kept.first {
            logger.warning(
                "kept \(kept.count) completed files on their lengths: the server did not confirm them "
                    + "(\(first.path): \(first.reason))")
        }
        let unchecked = resources.values.reduce(0) { $0 + $1.count }
        if unchecked > 0 {
            logger.warning(
                "kept \(unchecked) more completed files on their lengths unchecked: the server stopped answering")
        }
        return (verified, changed)
    }

    /// Asks the server for the current ETag of each resource, `options.connections` at a time,
    /// until it does not answer.
    private func check(_ resources: [CheckedResource]) async -> [(CheckedResource, CompletedFileCheck)] {
        await withTaskGroup(of: (CheckedResource, CompletedFileCheck).self) { group in
            var results: [(CheckedResource, CompletedFileCheck)] = []
            var next = resources.makeIterator()
            for _ in 0..<options.connections {
                guard let resource = next.next() else { break }
                group.addTask { (resource, await self.check(resource.url, recorded: resource.tag)) }
            }
            while let result = await group.next() {
                results.append(result)
                if case .unreachable = result.1 {
                    group.cancelAll()
                    continue
                }
                if !group.isCancelled, let resource = next.next() {
                    group.addTask { (resource, await self.check(resource.url, recorded: resource.tag)) }
                }
            }
            return results
        }
    }

    /// One resource's check.
    private func check(_ url: String, recorded: EntityTag) async -> CompletedFileCheck {
        do {
            // Tried once: a server that does not answer now ends the checking, it is not waited for.
            let head = try await client.head(
                of: url, headers: options.headers, retry: .none, refusedHead: [403, 405, 501])
            return .judging(status: head.status, current: head.entityTag, recorded: recorded)
        } catch {
            return .unreachable(reason: "\(error)")
        }
    }
}
