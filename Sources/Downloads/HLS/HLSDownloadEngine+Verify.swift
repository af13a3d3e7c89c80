import Core
import HTTP
import Synchronization

/// What the server says of a completed file's resource, against the ETag recorded when it was fetched.
enum CompletedFileCheck: Sendable, Hashable {
    /// The server still has the resource with the recorded ETag.
    case unchanged
    /// The server has the resource with another ETag: the file on disk is not what it serves now.
    case changed
    /// The server could not vouch for it (an error status, no ETag, no answer): the file is kept
    /// on its length.
    case unverified(reason: String)
    /// The server could not be reached: the files left to check are kept on their length too,
    /// without asking (a package resumed offline must not wait for a retry per file).
    case unreachable(reason: String)

    /// The check of a server's answer: `status` and the `current` ETag it gave.
    static func judging(status: HTTPStatus, current: EntityTag?, recorded: EntityTag) -> CompletedFileCheck {
        guard status.isSuccess else { return .unverified(reason: "HTTP \(status.rawValue)") }
        guard let current else { return .unverified(reason: "no ETag in the answer") }
        if current.strongMatches(recorded) { return .unchanged }
        // The same tag made weak (a server compressing on the fly, say): equal content, maybe not
        // equal bytes; not a change.
        if current.weakMatches(recorded) { return .unverified(reason: "a weak ETag") }
        return .changed
    }
}

extension HLSDownloadEngine {
    /// Checks the files an earlier run completed against the server before this run counts them:
    /// one HEAD request per resource whose strong ETag was recorded (a GET of its first byte when
    /// the server refuses HEAD), at most ``HLSDownloadOptions/connections`` at once. Nothing is
    /// downloaded for a file that is unchanged; one whose resource changed is fetched again (the
    /// old file stays in place until the new one replaces it). Not checked: a package whose last
    /// run completed it (running the command again on it asks the server nothing, so it works
    /// offline), and live recordings (their early segments have left the server's window).
    ///
    /// - Returns: How many files the server confirmed, and how many changed.
    func verifyCompleted(
        _ outcomes: inout [(FileState, RangedFileState?)], files: [PlannedFile],
        records: [String: PackageManifest.File], status: PackageStatus?
    ) async -> (verified: Int, changed: Int) {
        guard options.verifiesCompletedFiles, status != .complete, !state.withLock({ $0.live }) else { return (0, 0) }
        var byURL: [String: (tag: EntityTag, indices: [Int])] = [:]
        for (index, (fileState, _)) in outcomes.enumerated() {
            guard case .done(_, let recorded?) = fileState, files[index].kind != .key,
                let tag = EntityTag(headerValue: recorded), !tag.isWeak
            else { continue }
            byURL[files[index].url, default: (tag, [])].indices.append(index)
        }
        guard !byURL.isEmpty else { return (0, 0) }
        let checks = await check(byURL.map { ($0.key, $0.value.tag) })
        var verified = 0
        var changed = 0
        for (url, check) in checks {
            guard let indices = byURL[url]?.indices else { continue }
            switch check {
            case .unchanged:
                verified += indices.count
            case .changed:
                changed += indices.count
                logger.info("\(url) changed on the server since it was fetched: fetching it again")
                for index in indices {
                    outcomes[index] = reconcile(files[index], record: records[files[index].path], keepingFinal: false)
                }
            case .unverified(let reason):
                logger.warning(
                    "kept \(files[indices[0]].path) on its length: the server did not confirm it (\(reason))")
            case .unreachable(let reason):
                logger.warning("kept \(files[indices[0]].path) on its length: the server did not answer (\(reason))")
            }
        }
        let unchecked = byURL.count - checks.count
        if unchecked > 0 {
            logger.warning("kept \(unchecked) more completed files on their length: the server did not answer")
        }
        return (verified, changed)
    }

    /// Asks the server for the current ETag of each resource, `options.connections` at a time,
    /// until it cannot be reached.
    private func check(_ resources: [(url: String, tag: EntityTag)]) async -> [(String, CompletedFileCheck)] {
        await withTaskGroup(of: (String, CompletedFileCheck).self) { group in
            var results: [(String, CompletedFileCheck)] = []
            var next = resources.makeIterator()
            for _ in 0..<options.connections {
                guard let resource = next.next() else { break }
                group.addTask { (resource.url, await self.check(resource.url, recorded: resource.tag)) }
            }
            while let result = await group.next() {
                results.append(result)
                if case .unreachable = result.1 {
                    group.cancelAll()
                    continue
                }
                if !group.isCancelled, let resource = next.next() {
                    group.addTask { (resource.url, await self.check(resource.url, recorded: resource.tag)) }
                }
            }
            return results
        }
    }

    /// One resource's check.
    private func check(_ url: String, recorded: EntityTag) async -> CompletedFileCheck {
        do {
            var head = try await head(url, method: .head)
            if head.status == .methodNotAllowed || head.status.rawValue == 501 {
                head = try await self.head(url, method: .get)
            }
            return .judging(status: head.status, current: head.entityTag, recorded: recorded)
        } catch {
            return .unreachable(reason: "\(error)")
        }
    }

    /// The response head of a `method` request for `url`; a GET asks for the first byte only and
    /// its body is dropped.
    private func head(_ url: String, method: HTTPMethod) async throws -> HTTPClientResponseHead {
        var request = HTTPClientRequest(url: url, method: method, headers: options.headers)
        request.decodesContent = false
        if method == .get { request.range = .closed(first: 0, last: 0) }
        let response = try await client.execute(request, retry: options.retry)
        if method != .head { response.body.cancel() }
        return response.head
    }
}
