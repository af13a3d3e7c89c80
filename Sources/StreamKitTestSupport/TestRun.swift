import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The scratch directory of this test process: `$TMPDIR/streamkit-tests/<pid>/`.
///
/// Servers keep their configuration and logs here and fixtures are generated here once per run.
/// At first use, directories left by earlier runs whose process is gone are swept: the process
/// groups they recorded are killed and the directories removed.
public enum TestRun {
    /// The parent of every run's directory.
    public static let baseDirectory: URL = {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        return URL(fileURLWithPath: base).appendingPathComponent("streamkit-tests", isDirectory: true)
    }()

    /// This run's directory, created on first use.
    public static let directory: URL = {
        sweepStaleRuns()
        let url = baseDirectory.appendingPathComponent("\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// The environment marker every child process gets, so that leftovers can be found.
    public static let markerVariable = "STREAMKIT_TEST_RUN"

    /// A new, empty directory inside this run's directory.
    public static func makeTemporaryDirectory(_ prefix: String) throws -> URL {
        let url = directory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The file listing this run's live process groups, one a line, for the sweep of a later run.
    static var processGroupFile: URL { directory.appendingPathComponent("process-groups") }

    /// Kills the process groups that runs whose process is gone recorded, and removes their
    /// directories. The removal (gigabytes, after a run of the large-file tests) happens on a
    /// background queue after a rename: done inline it held the first test that touched this
    /// type, and every test waiting on the same lazy value, for seconds, starving the
    /// cooperative pool that every other test shares.
    private static func sweepStaleRuns() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: baseDirectory.path) else { return }
        var trash: [URL] = []
        for entry in entries {
            if entry.hasPrefix(".trash-") {
                trash.append(baseDirectory.appendingPathComponent(entry))
                continue
            }
            guard let owner = pid_t(entry), owner != getpid() else { continue }
            if kill(owner, 0) == 0 || errno == EPERM { continue }
            let runDirectory = baseDirectory.appendingPathComponent(entry)
            let groups =
                (try? String(contentsOf: runDirectory.appendingPathComponent("process-groups"), encoding: .utf8)) ?? ""
            for line in groups.split(separator: "\n") {
                if let group = pid_t(line), group > 1 { kill(-group, SIGKILL) }
            }
            let renamed = baseDirectory.appendingPathComponent(".trash-\(entry)-\(UUID().uuidString.prefix(8))")
            if rename(runDirectory.path, renamed.path) == 0 { trash.append(renamed) }
        }
        guard !trash.isEmpty else { return }
        let directories = trash
        DispatchQueue.global(qos: .utility).async {
            for directory in directories { try? FileManager.default.removeItem(at: directory) }
        }
    }
}
