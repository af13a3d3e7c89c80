import Foundation
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ProcessLifetimeTests {
    /// Whether the group has `count` live members within 10 s: nginx accepts connections (so it
    /// counts as started) a moment before its master has forked the worker.
    static func membersReach(_ count: Int, ofGroup group: pid_t) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ProcessRegistry.members(ofGroup: group).count != count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return ProcessRegistry.members(ofGroup: group).count == count
    }

    /// Servers and encoders started by tests leave no process behind once stopped or dropped.
    @Test(.requires(.nginx, .nginxRTMP, .ffmpeg))
    func noStartedProcessOutlivesItsHandle() async throws {
        let root = try TestRun.makeTemporaryDirectory("lifetime")
        let web = try await Nginx.static(root: root)
        let rtmp = try await Nginx.rtmp(applications: [RTMPApplication(name: "live")])
        let encoder = try ChildProcess(
            executable: try Tool.ffmpeg.requirePath(),
            arguments: ["-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc", "-f", "null", "-"],
            logName: "ffmpeg-endless")
        let groups = [web.process.pid, rtmp.process.pid, encoder.pid]
        // nginx runs a master and a worker; all three groups have live members.
        for group in groups { #expect(!ProcessRegistry.members(ofGroup: group).isEmpty) }
        #expect(await Self.membersReach(2, ofGroup: web.process.pid))
        #expect(ProcessRegistry.shared.liveGroups.isSuperset(of: groups))

        await web.stop()
        await rtmp.stop()
        await encoder.stop()
        for group in groups {
            #expect(ProcessRegistry.members(ofGroup: group).isEmpty, "group \(group) left processes")
        }
        #expect(ProcessRegistry.shared.liveGroups.isDisjoint(with: groups))
    }

    /// A handle dropped without stop (a test that threw) kills its process group.
    @Test(.requires(.nginx))
    func droppingAHandleKillsTheGroup() async throws {
        var nginx: Nginx? = try await Nginx.static(root: try TestRun.makeTemporaryDirectory("dropped"))
        let group = try #require(nginx?.process.pid)
        #expect(await Self.membersReach(2, ofGroup: group))
        nginx = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while !ProcessRegistry.members(ofGroup: group).isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(ProcessRegistry.members(ofGroup: group).isEmpty)
    }

    @Test func exitStatusAndSignalsAreReported() async throws {
        let success = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
        #expect(try await success.wait() == 3)
        #expect(success.standardOutput == "out\n" && success.standardError == "err\n")
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(sleeper.isRunning)
        sleeper.signal(SIGKILL)
        #expect(try await sleeper.wait() == 128 + SIGKILL)
        // 30 s: the 50 ms wait must time out even when this process's threads are held for seconds
        // (with 5 s, a stall that long let the sleep finish first, and the wait returned 0).
        let long = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        await #expect(throws: TestSupportError.self) { try await long.wait(timeout: .milliseconds(50)) }
        await long.stop()
        #expect(throws: TestSupportError.self) { try ChildProcess(executable: "/nonexistent", arguments: []) }
    }

    /// Children see the run marker, which is how CI finds leftovers after the run.
    @Test func childrenCarryTheRunMarker() async throws {
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo $\(TestRun.markerVariable)"])
        try await child.wait()
        #expect(child.standardOutput == "\(getpid())\n")
    }
}
