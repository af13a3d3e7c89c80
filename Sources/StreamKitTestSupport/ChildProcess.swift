import Foundation
import StreamKitCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program started by a test, in its own process group, stopped by pid.
///
/// Its output goes to log files in the run directory. Whatever happens to the test, the group is
/// killed: by ``stop(timeout:)``, by `deinit` when the handle is dropped, at process exit for any
/// still registered, and by the next run's sweep if this process was killed.
public final class ChildProcess: Sendable {
    /// The process id, which is also its process group id.
    public let pid: pid_t
    /// The program and arguments, for messages.
    public let commandLine: [String]
    /// Where standard output goes.
    public let standardOutputPath: URL
    /// Where standard error goes.
    public let standardErrorPath: URL

    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: The program's full path.
    ///   - arguments: Its arguments, without the program name.
    ///   - environment: Variables added to (or replacing) this process's environment.
    ///   - workingDirectory: The directory it starts in; unchanged when `nil`.
    ///   - logName: The stem of its log files in the run directory.
    /// - Throws: ``TestSupportError`` when `posix_spawn` fails.
    public init(
        executable: String, arguments: [String], environment: [String: String] = [:],
        workingDirectory: URL? = nil, logName: String? = nil
    ) throws {
        let stem = (logName ?? URL(fileURLWithPath: executable).lastPathComponent) + "-" + UUID().uuidString.prefix(8)
        let logDirectory = TestRun.directory.appendingPathComponent("logs", isDirectory: true)
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        standardOutputPath = logDirectory.appendingPathComponent("\(stem).out")
        standardErrorPath = logDirectory.appendingPathComponent("\(stem).err")
        commandLine = [executable] + arguments

        var mergedEnvironment = ProcessInfo.processInfo.environment
        for (key, value) in environment { mergedEnvironment[key] = value }
        mergedEnvironment[TestRun.markerVariable] = "\(getpid())"

        pid = try Self.spawn(
            executable: executable, arguments: arguments, environment: mergedEnvironment,
            workingDirectory: workingDirectory, standardOutput: standardOutputPath.path,
            standardError: standardErrorPath.path)
        ProcessRegistry.shared.register(pid)
    }

    deinit {
        if exitStatus.withLock({ $0 }) == nil {
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        ProcessRegistry.shared.unregister(pid)
    }

    /// The exit status once the process has ended (the signal number plus 128 if it was killed),
    /// `nil` while it runs. Reaps the process when it has ended.
    public var status: Int32? {
        exitStatus.withLock { status in
            if status == nil { status = Self.reap(pid, blocking: false) }
            return status
        }
    }

    /// Whether the process is still running.
    public var isRunning: Bool { status == nil }

    /// Sends `signal` to the whole process group.
    public func signal(_ signal: Int32) {
        if isRunning { kill(-pid, signal) }
    }

    /// Waits until the process ends, up to `timeout`.
    ///
    /// - Returns: The exit status.
    /// - Throws: ``TestSupportError`` when it is still running after `timeout`.
    @discardableResult
    public func wait(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
        if let status { return status }
        throw TestSupportError("\(commandLine.joined(separator: " ")) still running after \(timeout)")
    }

    /// Asks the process group to end with SIGTERM, then kills it with SIGKILL after `timeout`.
    /// Waits until the leader has exited and no process of the group is left.
    public func stop(timeout: Duration = .seconds(5)) async {
        signal(SIGTERM)
        if (try? await wait(timeout: timeout)) == nil {
            kill(-pid, SIGKILL)
            _ = try? await wait(timeout: .seconds(10))
        }
        // Children of the leader (nginx workers) may outlive it by a moment.
        let deadline = ContinuousClock.now + .seconds(5)
        while !ProcessRegistry.members(ofGroup: pid).isEmpty && ContinuousClock.now < deadline {
            kill(-pid, SIGKILL)
            try? await Task.sleep(for: .milliseconds(10))
        }
        ProcessRegistry.shared.unregister(pid)
    }

    /// What the process wrote to standard output so far.
    public var standardOutput: String { (try? String(contentsOf: standardOutputPath, encoding: .utf8)) ?? "" }

    /// What the process wrote to standard error so far.
    public var standardError: String { (try? String(contentsOf: standardErrorPath, encoding: .utf8)) ?? "" }

    // MARK: Private

    private static func reap(_ pid: pid_t, blocking: Bool) -> Int32? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
        guard result == pid else { return result < 0 && errno == ECHILD ? -1 : nil }
        let signalNumber = status & 0x7F
        return signalNumber == 0 ? (status >> 8) & 0xFF : 128 + signalNumber
    }

    private static func spawn(
        executable: String, arguments: [String], environment: [String: String], workingDirectory: URL?,
        standardOutput: String, standardError: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let workingDirectory {
            guard let addChdir = GNUSpawnExtensions.addChdir else {
                throw TestSupportError("posix_spawn_file_actions_addchdir_np is not available")
            }
            _ = addChdir(&actions, workingDirectory.path)
        }
        // Sockets and files the test process holds must not leak into servers it starts.
        _ = GNUSpawnExtensions.addCloseFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// Every process group a test started and has not yet seen end, so they can all be killed.
public final class ProcessRegistry: Sendable {
    /// The registry of this test process.
    public static let shared = ProcessRegistry()

    private let groups = Mutex<Set<pid_t>>([])
    /// Whether a write of the process-group file is queued and has not yet read the set.
    private let persistQueued = Mutex(false)
    /// Writes the process-group file off the cooperative pool (a rename held up by other tests'
    /// disk writes would hold up every task waiting for a thread), one write for a burst of changes.
    private let writer = DispatchQueue(label: "streamkit.test.process-groups", qos: .utility)

    private init() {
        atexit {
            for group in ProcessRegistry.shared.liveGroups { kill(-group, SIGKILL) }
        }
    }

    /// The process groups started and not yet stopped.
    public var liveGroups: Set<pid_t> { groups.withLock { $0 } }

    func register(_ group: pid_t) {
        groups.withLock { _ = $0.insert(group) }
        persistSoon()
    }

    func unregister(_ group: pid_t) {
        groups.withLock { _ = $0.remove(group) }
        persistSoon()
    }

    /// Queues a write of the set as it is when the write starts: a change made after that point
    /// queues another.
    private func persistSoon() {
        let queue = persistQueued.withLock { queued in
            defer { queued = true }
            return !queued
        }
        guard queue else { return }
        writer.async {
            self.persistQueued.withLock { $0 = false }
            self.persist(self.liveGroups)
        }
    }

    /// The pids of every live process in `group`, read from `/proc` (empty elsewhere).
    public static func members(ofGroup group: pid_t) -> [pid_t] {
        // No process at all, not even a zombie, is in the group: skip reading every process's
        // stat, which callers polling a stopping group did hundreds of times a second.
        if kill(-group, 0) != 0 && errno == ESRCH { return [] }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8)
            else { return nil }
            // Fields after the parenthesised command: state, ppid, pgrp, ...
            guard let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", pid_t(fields[2]) == group else { return nil }
            return pid
        }
    }

    /// Replaces the file whole, without `fsync`: it only has to outlive this process, and the
    /// sync of Foundation's atomic write blocked a cooperative thread for seconds, at every child
    /// started or stopped, while other tests wrote to the disk.
    private func persist(_ snapshot: Set<pid_t>) {
        let path = TestRun.processGroupFile.path
        try? AtomicFile.write(
            Array(snapshot.map(String.init).joined(separator: "\n").utf8), to: path, temporarySuffix: ".tmp")
    }
}

/// glibc's non-portable spawn actions, which its headers hide from Swift without `_GNU_SOURCE`:
/// looked up at run time, so the code still builds where they do not exist.
private enum GNUSpawnExtensions {
    typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    static let addChdir: AddChdir? = lookup("posix_spawn_file_actions_addchdir_np")
    static let addCloseFrom: AddCloseFrom? = lookup("posix_spawn_file_actions_addclosefrom_np")

    private static func lookup<Function>(_ name: String) -> Function? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }
}
