import Foundation
import StreamKitCore
import StreamKitHTTPClient
import Synchronization

/// How a ``DownloadManager`` is set up.
public struct DownloadManagerConfiguration: Sendable {
    /// The manager's directory: the index `queue.sqlite`, its lock `queue.lock`, and by default the
    /// downloads, in `library/`.
    public var directory: URL
    /// Whether the manager runs tasks. A manager that only edits the queue (the `streamkit queue`
    /// commands other than `run`) sets this to `false`: tasks it makes ready wait for a runner.
    public var runsTasks: Bool
    /// How progressive files are fetched (connections, backoff, save interval).
    public var fileOptions: RangedFileOptions
    /// How HLS requests are retried before the task counts an error.
    public var hlsRetry: HTTPClientRetryPolicy
    /// The least time between two progress events of one task (default 100 ms: ten a second).
    public var progressInterval: Duration
    /// The most time between two saves of a running task's progress (state changes save at once).
    public var persistInterval: Duration
    /// The `User-Agent` sent.
    public var userAgent: String

    /// Creates a configuration.
    public init(
        directory: URL, runsTasks: Bool = true, fileOptions: RangedFileOptions = RangedFileOptions(),
        hlsRetry: HTTPClientRetryPolicy = .default, progressInterval: Duration = .milliseconds(100),
        persistInterval: Duration = .seconds(1), userAgent: String = "streamkit"
    ) {
        self.directory = directory
        self.runsTasks = runsTasks
        self.fileOptions = fileOptions
        self.hlsRetry = hlsRetry
        self.progressInterval = progressInterval
        self.persistInterval = persistInterval
        self.userAgent = userAgent
    }
}

/// A persistent download queue: HLS streams and progressive files,
/// kept in a SQLite index so that the queue, every task's state and every file's bytes survive a
/// crash. One manager per directory: a second one, in this process or another, gets a
/// ``DownloadManagerError`` of kind `directoryLocked`.
///
/// ```swift
/// let manager = try await DownloadManager(configuration: .init(directory: home))
/// let info = try await manager.add(DownloadRequest(url: url, kind: .file))
/// try await manager.start(info.id)
/// for await event in await manager.events() { ... }
/// ```
///
/// States move only along ``DownloadState/transitions``. Tasks run in queue order, at most
/// ``maximumConcurrentDownloads`` at once.
public actor DownloadManager {
    /// The manager's directory.
    public nonisolated let directory: URL
    /// The settings it was created with.
    public nonisolated let configuration: DownloadManagerConfiguration
    /// Added tasks start at once (`true`) or wait for ``start(_:)`` (`false`, the default).
    public var autoStart = false
    /// Tasks running at once, 1...16 (default 1); see ``setMaximumConcurrentDownloads(_:)``.
    public private(set) var maximumConcurrentDownloads = 1
    /// Where new tasks are stored (default `library/` in ``directory``).
    public private(set) var downloadDirectory: URL
    /// The most bytes a second all tasks receive together, or `nil` for no limit.
    public private(set) var bandwidthLimit: Int64?

    private let lock: DirectoryLock
    let index: DownloadIndex
    var tasks: [String: DownloadTaskInfo] = [:]
    private var runners: [String: Task<Void, Never>] = [:]
    private var subscribers: [Int: (filter: String?, continuation: AsyncStream<DownloadEvent>.Continuation)] = [:]
    private var nextSubscriber = 0
    private var callbacks = DownloadCallbacks()
    private var taskCallbacks: [String: DownloadTaskCallbacks] = [:]
    private var lastPersist: [String: ContinuousClock.Instant] = [:]
    /// Made when the first task runs (a manager that only lists or records tasks, such as the one
    /// behind `streamkit download`, never needs one).
    private var client: HTTPClient?
    private var ranSinceIdle = false
    private var closed = false

    /// Opens the manager of `configuration.directory`, creating it if needed, and recovers from a
    /// crash: running tasks come back ready, stops in progress end stopped, removals finish.
    ///
    /// - Throws: ``DownloadManagerError``: `directoryLocked` when another manager uses the
    ///   directory, `database` or `fileSystem` when it cannot be opened.
    public init(configuration: DownloadManagerConfiguration) async throws(DownloadManagerError) {
        let directory = configuration.directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DownloadManagerError(.fileSystem, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        self.directory = directory
        self.configuration = configuration
        // A lock just released can stay held for a moment by a process being spawned elsewhere in
        // this process (it shares the file until its exec closes it): try a few times.
        var acquired: DirectoryLock?
        for attempt in 1...10 {
            do {
                acquired = try DirectoryLock(directory: directory)
                break
            } catch  where error.kind == .directoryLocked && attempt < 10 {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let acquired else { throw DownloadManagerError(.directoryLocked, "\(directory.path) is locked") }
        lock = acquired
        // Opening may create the file and switch it to WAL, which fsyncs: off the cooperative pool.
        let path = directory.appendingPathComponent("queue.sqlite").path
        index = try await offCooperativePool {
            Result { () throws(DownloadManagerError) in try DownloadIndex(path: path) }
        }
        .get()
        downloadDirectory = directory.appendingPathComponent("library", isDirectory: true)
        if let value = try index.setting("maxConcurrent"), let number = Int(value) {
            maximumConcurrentDownloads = number
        }
        if let value = try index.setting("downloadDirectory") {
            downloadDirectory = URL(fileURLWithPath: value, isDirectory: true)
        }
        bandwidthLimit = try index.setting("bandwidthLimit").flatMap { Int64($0) }
        autoStart = try index.setting("autoStart") == "1"
        try recover()
        schedule()
    }

    /// The client tasks run with, made (with the current bandwidth limit) when first needed.
    private func activeClient() throws(DownloadManagerError) -> HTTPClient {
        if let client { return client }
        do {
            let made = try Self.makeClient(configuration, limit: bandwidthLimit)
            client = made
            return made
        } catch {
            throw DownloadManagerError(.transfer, "cannot start the HTTP client: \(error)")
        }
    }

    private static func makeClient(_ configuration: DownloadManagerConfiguration, limit: Int64?) throws -> HTTPClient {
        try HTTPClient(
            configuration: HTTPClientConfiguration(
                userAgent: configuration.userAgent, maximumConnectionsPerHost: 64, maximumConnections: 256,
                globalReceiveRate: limit, bodyBufferLimit: 256 << 10, receiveBufferSize: 256 << 10))
    }

    private func recover() throws(DownloadManagerError) {
        for var info in try index.tasks() {
            if info.state == .removing {
                deleteFiles(of: info)
                try index.delete(info.id)
                continue
            }
            let recovered = info.state.recovered
            if recovered != info.state {
                info.state = recovered
                try index.update(info)
            }
            tasks[info.id] = info
        }
    }

    /// Cancels running tasks (they come back `ready`, to resume next time), saves, and releases
    /// the directory. The manager does nothing afterwards.
    public func close() async {
        guard !closed else { return }
        closed = true
        let running = runners
        for (id, runner) in running {
            if var info = tasks[id], info.state == .running {
                info.state = .ready
                info.bytesPerSecond = 0
                tasks[id] = info
                try? index.update(info)
            }
            runner.cancel()
        }
        for runner in running.values { await runner.value }
        for subscriber in subscribers.values { subscriber.continuation.finish() }
        subscribers = [:]
        await client?.shutdown()
        // Fold the WAL into the database now, off the cooperative pool: the checkpoint fsyncs,
        // which takes seconds on a busy disk, and SQLite would otherwise do it when the last
        // connection closes, on whatever thread drops the manager.
        let index = index
        _ = await offCooperativePool { try? index.database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        lock.release()
    }

    // MARK: Events

    /// Every event from now on, until the manager closes.
    public func events() -> AsyncStream<DownloadEvent> { subscribe(filter: nil) }

    /// The events of one task from now on (its state changes, progress, speed, completion, failure,
    /// removal), until the manager closes.
    public func updates(for id: String) -> AsyncStream<DownloadEvent> { subscribe(filter: id) }

    /// Sets the manager-wide closures (replacing earlier ones).
    public func setCallbacks(_ callbacks: DownloadCallbacks) { self.callbacks = callbacks }

    /// Sets one task's closures (replacing earlier ones); `nil` removes them.
    public func setCallbacks(_ callbacks: DownloadTaskCallbacks?, for id: String) { taskCallbacks[id] = callbacks }

    private func subscribe(filter: String?) -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloadEvent.self)
        let key = nextSubscriber
        nextSubscriber += 1
        if closed {
            continuation.finish()
        } else {
            subscribers[key] = (filter, continuation)
        }
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(key) }
        }
        return stream
    }

    private func unsubscribe(_ key: Int) { subscribers[key] = nil }

    private func emit(_ event: DownloadEvent) {
        for subscriber in subscribers.values where subscriber.filter == nil || subscriber.filter == event.taskID {
            subscriber.continuation.yield(event)
        }
        switch event {
        case .allCompleted: callbacks.allCompleted?()
        case .completed(let info): callbacks.taskCompleted?(info)
        case .failed(let info, let error): callbacks.taskFailed?(info, error)
        case .stateChanged(let info, _): taskCallbacks[info.id]?.stateChanged?(info)
        case .progress(let info): taskCallbacks[info.id]?.progressChanged?(info)
        case .speed(let id, _): if let info = tasks[id] { taskCallbacks[id]?.speedChanged?(info) }
        case .postProcessing(let id, _): if let info = tasks[id] { taskCallbacks[id]?.postProcessingChanged?(info) }
        case .added, .removed: break
        }
    }

    // MARK: Queries

    /// Every task, in queue order.
    public func allTasks() -> [DownloadTaskInfo] { tasks.values.sorted { $0.queueID < $1.queueID } }

    /// Whether nothing is being added, queued, running or stopping.
    public var isIdle: Bool {
        runners.isEmpty && !tasks.values.contains { [.preparing, .ready, .running, .stopping].contains($0.state) }
    }

    /// The task with `id`, or `nil`.
    public func info(_ id: String) -> DownloadTaskInfo? { tasks[id] }

    /// The tasks that succeeded, in queue order.
    public func completedTasks() -> [DownloadTaskInfo] { allTasks().filter { $0.state == .success } }

    /// The finished items that play with no network, with the file to open.
    /// An item whose files were deleted behind the manager's back is left out.
    public func localItems() -> [LocalDownloadItem] {
        completedTasks().compactMap { info in
            let file =
                info.kind == .hls
                ? URL(fileURLWithPath: info.location).appendingPathComponent("index.m3u8")
                : URL(fileURLWithPath: info.location)
            guard FileManager.default.fileExists(atPath: file.path) else { return nil }
            return LocalDownloadItem(
                id: info.id, title: info.title, fileType: info.fileType, playableFile: file,
                byteCount: Self.byteCount(at: info.location))
        }
    }

    // MARK: Settings

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
        let running = allTasks().filter { $0.state == .running }
        for info in running.dropFirst(count) {
            try move(info.id, to: .ready)
            runners[info.id]?.cancel()
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
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DownloadManagerError(.fileSystem, "cannot create \(directory.path): \(error.localizedDescription)")
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

    // MARK: Tasks

    /// Adds a task at the end of the queue. It starts when ``autoStart`` is on (or `autoStart` says
    /// so), else it waits stopped for ``start(_:)``.
    ///
    /// - Returns: The task, after its first state change.
    /// - Throws: ``DownloadManagerError``: `invalidArgument` for a URL that is not http(s),
    ///   `duplicateTask` when the same source and selection are queued already.
    @discardableResult
    public func add(
        _ request: DownloadRequest, autoStart: Bool? = nil
    ) throws(DownloadManagerError)
        -> DownloadTaskInfo
    {
        try add(request, autoStart: autoStart, makesFolder: true)
    }

    /// ``add(_:autoStart:)``; `makesFolder: false` leaves the task's folder to the engine that
    /// runs it (a foreground task: a download that fails before it is planned leaves nothing).
    func add(
        _ request: DownloadRequest, autoStart: Bool?, makesFolder: Bool
    ) throws(DownloadManagerError)
        -> DownloadTaskInfo
    {
        let scheme = request.url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: request.url)?.host?.isEmpty == false else {
            throw DownloadManagerError(.invalidArgument, "not an http or https URL: '\(request.url)'")
        }
        let id = request.taskID
        if tasks[id] != nil {
            throw DownloadManagerError(.duplicateTask, "\(request.url) is in the queue already", taskID: id)
        }
        let folder = downloadDirectory.appendingPathComponent(id, isDirectory: true)
        var name = Self.fileName(fromURL: request.url)
        var location = request.kind == .hls ? folder.path : folder.appendingPathComponent(name).path
        if let chosen = request.location {
            // A place the user chose: the engine makes it (and names what is wrong with it).
            location = chosen
            if request.kind == .file { name = URL(fileURLWithPath: chosen).lastPathComponent }
        }
        var info = DownloadTaskInfo(
            id: id, queueID: 0, url: request.url, kind: request.kind,
            selection: request.kind == .hls ? request.selection : nil, decrypt: request.decrypt,
            fileType: request.fileType, title: request.title ?? name, thumbnailURL: request.thumbnailURL,
            state: .preparing, progress: 0, bytesDone: 0, bytesExpected: nil, bytesPerSecond: 0,
            postProcessingProgress: 0, lastError: nil, createdAt: Date(), finishedAt: nil, location: location,
            connections: request.connections ?? (request.kind == .hls ? 8 : configuration.fileOptions.connections),
            headers: request.headers.map { "\($0.name): \($0.value)" })
        info.queueID = try index.insert(info)
        tasks[id] = info
        emit(.added(info))
        do {
            if makesFolder && request.location == nil {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
        } catch {
            try fail(
                id, DownloadManagerError(.fileSystem, "cannot create \(folder.path): \(error.localizedDescription)"))
            return tasks[id] ?? info
        }
        try move(id, to: autoStart ?? self.autoStart ? .ready : .stopped)
        schedule()
        return tasks[id] ?? info
    }

    /// Queues every stopped or failed task.
    public func startAll() throws(DownloadManagerError) {
        for info in allTasks() where info.state == .stopped || info.state == .failed {
            try move(info.id, to: .ready, clearingError: true)
        }
        schedule()
    }

    /// Queues one stopped or failed task; one already ready or running is left as it is.
    ///
    /// - Throws: `unknownTask`, or `illegalTransition` for a task that succeeded or is being removed.
    public func start(_ id: String) throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        if info.state == .ready || info.state == .running { return }
        try move(id, to: .ready, clearingError: true)
        schedule()
    }

    /// Puts a failed task back in the queue (its error is cleared; it resumes where it stopped).
    ///
    /// - Throws: `unknownTask`, or `illegalTransition` when the task has not failed.
    public func retry(_ id: String) throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        guard info.state == .failed else { throw .illegalTransition(from: info.state, to: .ready, taskID: id) }
        try start(id)
    }

    /// Stops every ready or running task; returns once running ones have stopped.
    public func stopAll() async throws(DownloadManagerError) {
        for info in allTasks() where info.state == .ready || info.state == .running {
            try await stop(info.id)
        }
    }

    /// Stops one task: a queued one at once, a running one once its transfers end (everything
    /// fetched is kept). Stopping a stopped, failed or finished task does nothing.
    public func stop(_ id: String) async throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        switch info.state {
        case .ready:
            try move(id, to: .stopped)
        case .running:
            try move(id, to: .stopping)
            runners[id]?.cancel()
            await runners[id]?.value
        case .stopping:
            await runners[id]?.value
        default:
            return
        }
    }

    /// Removes one task and deletes its files (whatever its state).
    public func remove(_ id: String) async throws(DownloadManagerError) {
        guard let info = tasks[id] else { throw .unknownTask(id) }
        try move(id, to: .removing)
        if let runner = runners[id] {
            runner.cancel()
            await runner.value
        }
        deleteFiles(of: info)
        try index.delete(id)
        tasks[id] = nil
        taskCallbacks[id] = nil
        emit(.removed(id: id))
    }

    /// Removes every task that has not succeeded, with its files; finished ones stay.
    ///
    /// - Returns: The ids removed.
    @discardableResult
    public func removeUnfinished() async throws(DownloadManagerError) -> [String] {
        var removed: [String] = []
        for info in allTasks() where info.state != .success && info.state != .removing {
            try await remove(info.id)
            removed.append(info.id)
        }
        return removed
    }

    // MARK: State changes

    func move(_ id: String, to next: DownloadState, clearingError: Bool = false) throws(DownloadManagerError) {
        guard var info = tasks[id] else { throw .unknownTask(id) }
        let previous = info.state
        guard previous.canTransition(to: next) else { throw .illegalTransition(from: previous, to: next, taskID: id) }
        info.state = next
        if clearingError { info.lastError = nil }
        if next != .running { info.bytesPerSecond = 0 }
        if next == .success {
            info.finishedAt = Date()
            info.lastError = nil
        }
        try index.update(info)
        lastPersist[id] = .now
        tasks[id] = info
        emit(.stateChanged(info, from: previous))
    }

    private func fail(_ id: String, _ error: DownloadManagerError) throws(DownloadManagerError) {
        guard var info = tasks[id] else { return }
        info.lastError = error.detail
        tasks[id] = info
        try move(id, to: .failed)
        if let info = tasks[id] { emit(.failed(info, error)) }
    }

    // MARK: Scheduling

    private func schedule() {
        guard configuration.runsTasks, !closed else { return }
        var slots = maximumConcurrentDownloads - runners.count
        for info in allTasks() where slots > 0 && info.state == .ready && runners[info.id] == nil {
            let client: HTTPClient
            do {
                client = try activeClient()
            } catch {
                try? move(info.id, to: .running)
                try? fail(info.id, error)
                continue
            }
            do {
                try move(info.id, to: .running)
            } catch {
                continue
            }
            ranSinceIdle = true
            slots -= 1
            let snapshot = tasks[info.id] ?? info
            runners[info.id] = Task { await self.execute(snapshot, client: client) }
        }
    }

    /// Emits `allCompleted` when a task ended (succeeded or failed) and nothing is left to run.
    private func checkIdle() {
        guard ranSinceIdle, runners.isEmpty,
            !tasks.values.contains(where: { $0.state == .ready || $0.state == .running })
        else { return }
        ranSinceIdle = false
        emit(.allCompleted)
    }

    /// The runner ended, having thrown `error` (`nil`: success).
    func finished(_ id: String, error: (any Error)?) {
        runners[id] = nil
        guard let info = tasks[id] else {
            schedule()
            return
        }
        let outcome = DownloadRunOutcome(error: error, taskID: id)
        do {
            switch (outcome, outcome.nextState(from: info.state)) {
            case (_, nil):
                break
            case (.succeeded, .success?):
                var done = info
                done.progress = 1
                done.postProcessingProgress = 1
                if let expected = done.bytesExpected { done.bytesDone = expected }
                tasks[id] = done
                emit(.postProcessing(id: id, fraction: 1))
                try move(id, to: .success)
                if let info = tasks[id] { emit(.completed(info)) }
            case (.failed(let failure), .failed?):
                try fail(id, failure)
            case (_, let next?):
                try move(id, to: next)
            }
        } catch {
            // A transition refused here would be a bug in the table; the task stays as it is.
        }
        schedule()
        let ended = tasks[id].map { $0.state == .success || $0.state == .failed } ?? false
        if ended { checkIdle() }
    }

    // MARK: Progress

    func reportProgress(_ id: String, done: Int64, expected: Int64?, fraction: Double?, speed: Double) {
        guard var info = tasks[id], info.state == .running else { return }
        info.bytesDone = done
        info.bytesExpected = expected
        info.progress = min(1, fraction ?? expected.map { $0 > 0 ? Double(done) / Double($0) : 0 } ?? 0)
        info.bytesPerSecond = speed
        tasks[id] = info
        emit(.progress(info))
        emit(.speed(id: id, bytesPerSecond: speed))
        if let last = lastPersist[id], last.duration(to: .now) < configuration.persistInterval { return }
        lastPersist[id] = .now
        try? index.update(info)
    }

    func saveFileState(_ id: String, _ state: FileResumeState) throws(DownloadManagerError) {
        guard var info = tasks[id] else { return }
        info.bytesDone = state.done.byteCount
        info.bytesExpected = state.length
        if let length = state.length, length > 0 { info.progress = min(1, Double(info.bytesDone) / Double(length)) }
        tasks[id] = info
        try index.saveFileState(state, for: info)
        lastPersist[id] = .now
    }

    func fileState(_ id: String) throws(DownloadManagerError) -> FileResumeState { try index.fileState(id) }

    // MARK: Running a task

    private nonisolated func execute(_ info: DownloadTaskInfo, client: HTTPClient) async {
        let meter = ProgressGate(interval: configuration.progressInterval)
        let (reports, sink) = AsyncStream.makeStream(of: ProgressGate.Report.self, bufferingPolicy: .bufferingNewest(4))
        let forwarder = Task {
            for await report in reports {
                await self.reportProgress(
                    info.id, done: report.done, expected: report.expected, fraction: report.fraction,
                    speed: report.speed)
            }
        }
        var failure: (any Error)?
        do {
            switch info.kind {
            case .file: try await runFile(info, client: client, meter: meter, sink: sink)
            case .hls: try await runHLS(info, client: client, meter: meter, sink: sink)
            }
        } catch {
            failure = Task.isCancelled ? CancellationError() : error
        }
        sink.finish()
        await forwarder.value
        await finished(info.id, error: failure)
    }

    private nonisolated func runFile(
        _ info: DownloadTaskInfo, client: HTTPClient, meter: ProgressGate,
        sink: AsyncStream<ProgressGate.Report>.Continuation
    ) async throws {
        let partial = info.location + ".streamkit-partial"
        if FileManager.default.fileExists(atPath: info.location) {
            // Complete already (the rename happened, the state change did not).
            return
        }
        let initial = try await fileState(info.id)
        let id = info.id
        let downloader = RangedFileDownloader(
            client: client, url: info.url, headers: info.requestHeaders, partialPath: partial,
            options: configuration.fileOptions, initial: initial, taskID: id,
            onProgress: { done, length in
                if let report = meter.report(done: done, expected: length, fraction: nil, speed: nil) {
                    sink.yield(report)
                }
            },
            save: { state in try await self.saveFileState(id, state) })
        _ = try await downloader.run()
        if rename(partial, info.location) != 0 {
            throw DownloadManagerError(
                .fileSystem, "cannot rename \(partial) to \(info.location): \(String(cString: strerror(errno)))",
                taskID: id)
        }
    }

    private nonisolated func runHLS(
        _ info: DownloadTaskInfo, client: HTTPClient, meter: ProgressGate,
        sink: AsyncStream<ProgressGate.Report>.Continuation
    ) async throws {
        let policy = DownloadFailurePolicy(configuration.fileOptions)
        var streak = FailureStreak()
        while true {
            // An attempt that failed before the package was planned leaves a folder with no
            // package.json, which the downloader refuses to reuse; the folder is the task's own.
            let manifest = URL(fileURLWithPath: info.location).appendingPathComponent(PackageLayout.manifestName)
            if info.ownsFolder && !FileManager.default.fileExists(atPath: manifest.path) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: info.location)) ?? [] {
                    try? FileManager.default.removeItem(atPath: info.location + "/" + name)
                }
            }
            let download = HLSDownloader(client: client).start(info.hlsJob(retry: configuration.hlsRetry))
            let done = Mutex<Int64>(0)
            do {
                try await withTaskCancellationHandler {
                    for await event in download.events {
                        guard case .progress(let progress) = event else { continue }
                        done.withLock { $0 = progress.bytesDone }
                        if let report = meter.report(
                            done: progress.bytesDone, expected: progress.estimatedTotalBytes,
                            fraction: progress.fractionCompleted, speed: progress.bytesPerSecond)
                        {
                            sink.yield(report)
                        }
                    }
                    _ = try await download.result()
                } onCancel: {
                    download.cancel()
                }
                return
            } catch let error as HLSDownloadError {
                streak.progressed(to: done.withLock { $0 })
                let failure = DownloadFailure(error, taskCancelled: Task.isCancelled)
                switch policy.decide(failure, streak: &streak) {
                case .cancel:
                    throw CancellationError()
                case .retry(let delay):
                    try await Task.sleep(for: delay)
                case .fail(let kind, let failures):
                    throw DownloadFailurePolicy.error(
                        kind, consecutiveFailures: failures, cause: error.description, taskID: info.id)
                }
            }
        }
    }

    private func deleteFiles(of info: DownloadTaskInfo) {
        guard info.ownsFolder else {
            // A place the user chose (`streamkit download -o`): only what the task wrote there.
            if info.kind == .hls {
                let manifest = URL(fileURLWithPath: info.location).appendingPathComponent(PackageLayout.manifestName)
                if FileManager.default.fileExists(atPath: manifest.path) {
                    try? FileManager.default.removeItem(atPath: info.location)
                }
                return
            }
            for suffix in ["", ".streamkit-partial", ".streamkit-resume", ".streamkit-ranges"] {
                try? FileManager.default.removeItem(atPath: info.location + suffix)
            }
            return
        }
        let target =
            info.kind == .hls ? info.location : URL(fileURLWithPath: info.location).deletingLastPathComponent().path
        try? FileManager.default.removeItem(atPath: target)
    }

    // MARK: Helpers

    static func fileName(fromURL url: String) -> String {
        let path = URLComponents(string: url)?.path ?? ""
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let cleaned = String(
            (last.removingPercentEncoding ?? last).map { $0 == "/" || $0 == "\\" || $0.asciiValue == 0 ? "_" : $0 })
        if cleaned.isEmpty || cleaned == "." || cleaned == ".." { return "download" }
        return cleaned
    }

    static func byteCount(at path: String) -> Int64 {
        var total: Int64 = 0
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
        if !isDirectory.boolValue {
            return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
        }
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            if let size = enumerator?.fileAttributes?[.size] as? Int64,
                enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular, !name.isEmpty
            {
                total += size
            }
        }
        return total
    }
}

/// Lets progress through at most once per interval, and measures the speed.
final class ProgressGate: Sendable {
    struct Report: Sendable {
        var done: Int64
        var expected: Int64?
        var fraction: Double?
        var speed: Double
    }

    private struct State {
        var last: ContinuousClock.Instant?
        var lastDone: Int64 = 0
        var speed: Double = 0
    }

    private let interval: Duration
    private let state = Mutex(State())

    init(interval: Duration) { self.interval = interval }

    /// A report when the interval has passed since the last one (the first always passes).
    func report(done: Int64, expected: Int64?, fraction: Double?, speed: Double?) -> Report? {
        state.withLock { state in
            let now = ContinuousClock.now
            if let last = state.last {
                let elapsed = last.duration(to: now)
                guard elapsed >= interval else { return nil }
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let instant = Double(max(0, done - state.lastDone)) / max(seconds, 1e-3)
                state.speed = state.speed == 0 ? instant : state.speed * 0.7 + instant * 0.3
            }
            state.last = now
            state.lastDone = done
            return Report(done: done, expected: expected, fraction: fraction, speed: speed ?? state.speed)
        }
    }
}
