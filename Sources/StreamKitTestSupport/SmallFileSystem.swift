import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs of a few megabytes mounted on a new directory: a disk that really fills, for what a
/// full disk does to downloads and databases. Mounting needs root (as in CI and on these machines);
/// elsewhere the tests that need one are skipped, or fail when tools are required.
public final class SmallFileSystem: Sendable {
    /// The mounted directory.
    public let root: URL

    /// Whether a tmpfs can be mounted here: running as root with `mount` installed.
    public static var isAvailable: Bool {
        #if os(Linux)
        geteuid() == 0 && Tool.mount.isAvailable && Tool.umount.isAvailable
        #else
        false
        #endif
    }

    private init(root: URL) { self.root = root }

    /// Mounts a tmpfs of `megabytes` MiB on a new directory.
    ///
    /// - Throws: ``TestSupportError`` when it cannot be mounted.
    public static func mount(megabytes: Int) async throws -> SmallFileSystem {
        guard isAvailable else {
            throw TestSupportError("mounting a tmpfs needs root and mount (Debian package mount)")
        }
        let root = try TestRun.makeTemporaryDirectory("tmpfs")
        try await Tool.mount.run(["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "streamkit-test", root.path])
        return SmallFileSystem(root: root)
    }

    /// Grows (or shrinks) the file system to `megabytes` MiB, keeping its files: the space a
    /// user frees.
    public func resize(megabytes: Int) async throws {
        try await Tool.mount.run(["-o", "remount,size=\(megabytes)m", root.path])
    }

    /// Unmounts it (lazily, so that a file still open does not keep it) and removes the directory.
    public func unmount() async {
        _ = try? await Tool.umount.run(["-l", root.path], allowFailure: true)
        try? FileManager.default.removeItem(at: root)
    }
}

extension Tool {
    public static let mount = Tool("mount")
    public static let umount = Tool("umount", package: "mount")
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where a tmpfs can be mounted (root), or always when tools are required
    /// (`STREAMKIT_REQUIRE_TOOLS=1`), so that in CI a missing capability is a failure, not a skip.
    public static func requiresSmallFileSystem(sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        .enabled(
            if: ToolPolicy.toolsRequired || SmallFileSystem.isAvailable,
            "needs root to mount a tmpfs (and mount, from Debian's mount package)", sourceLocation: sourceLocation)
    }
}
