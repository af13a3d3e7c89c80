import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@testable import StreamKitDownloads

/// Free space and cellular access: the pure decision, the route table read from a fake root, and
/// a manager whose tasks wait for them and go on once they hold.
struct DownloadRequirementsTests {
    static func space(free: Int64, total: Int64) -> FileSystemSpace {
        FileSystemSpace(mountPoint: "/data", availableBytes: free, totalBytes: total)
    }

    /// One decision: the settings, the facts, and the words expected in the reason (`nil`: none).
    struct Case: Sendable, CustomTestStringConvertible {
        var floor: Int64?
        var free: Int64
        var total: Int64
        var cellularAllowed = true
        var onCellular = false
        var expected: String?
        var testDescription: String {
            "floor \(floor ?? -1), free \(free) of \(total), cellular \(cellularAllowed)/\(onCellular)"
        }
    }

    static let cases: [Case] = [
        Case(floor: nil, free: 300 << 20, total: 100 << 30, expected: nil),
        Case(floor: nil, free: 200 << 20, total: 100 << 30, expected: "below the floor of 256.0 MB"),
        Case(floor: nil, free: 300 << 10, total: 20 << 20, expected: nil),
        Case(floor: nil, free: 100 << 10, total: 20 << 20, expected: "below the floor of 204.8 KB"),
        Case(floor: 1 << 20, free: 2 << 20, total: 20 << 20, expected: nil),
        Case(
            floor: 1 << 20, free: 512 << 10, total: 20 << 20,
            expected: "waiting for free space: the file system at /data"),
        Case(floor: 0, free: 0, total: 20 << 20, expected: nil),
        Case(
            floor: nil, free: 300 << 20, total: 100 << 30, cellularAllowed: false, onCellular: true,
            expected: "leaves through wwan0, and cellular access is off"),
        Case(floor: nil, free: 300 << 20, total: 100 << 30, cellularAllowed: true, onCellular: true, expected: nil),
        Case(floor: nil, free: 300 << 20, total: 100 << 30, cellularAllowed: false, onCellular: false, expected: nil),
    ]

    /// The floor is the smaller of 256 MiB and 1% unless set; cellular counts only when off.
    @Test(arguments: cases) func decisions(_ test: Case) {
        let requirements = DownloadRequirements(allowsCellularAccess: test.cellularAllowed, freeSpaceFloor: test.floor)
        let facts = DownloadRequirements.Facts(
            space: Self.space(free: test.free, total: test.total), host: "example.com",
            interface: test.onCellular ? "wwan0" : "eth0", interfaceIsCellular: test.onCellular)
        let unmet = requirements.unmet(facts)
        if let expected = test.expected {
            #expect(unmet?.contains(expected) == true, "\(unmet ?? "nil")")
        } else {
            #expect(unmet == nil, "\(unmet ?? "")")
        }
    }

    /// A fake root: a default route through `eth0`, 10.0.0.0/8 through `wwan0`, 192.168.8.0/24
    /// through `usb0` (a modem whose uevent says `DEVTYPE=wwan`).
    static func fakeRoot(loopbackIsCellular: Bool = false) throws -> URL {
        let root = try TestRun.makeTemporaryDirectory("netroot")
        let net = root.appendingPathComponent("proc/net")
        try FileManager.default.createDirectory(at: net, withIntermediateDirectories: true)
        try """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
        wwan0\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0
        usb0\t0008A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0

        """.write(to: net.appendingPathComponent("route"), atomically: true, encoding: .utf8)
        for (name, devtype) in [
            ("eth0", ""), ("usb0", "DEVTYPE=wwan\n"), ("lo", loopbackIsCellular ? "DEVTYPE=wwan\n" : ""),
        ] {
            let folder = root.appendingPathComponent("sys/class/net/\(name)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try "INTERFACE=\(name)\n\(devtype)".write(
                to: folder.appendingPathComponent("uevent"), atomically: true, encoding: .utf8)
        }
        return root
    }

    /// The most specific route wins; loopback with no route is `lo`; a `wwan` name or a
    /// `DEVTYPE=wwan` uevent is cellular.
    @Test func routesAndInterfaces() throws {
        let routes = NetworkRoutes(root: try Self.fakeRoot())
        #expect(routes.interface(toward: "93.184.216.34") == "eth0")
        #expect(routes.interface(toward: "10.1.2.3") == "wwan0")
        #expect(routes.interface(toward: "192.168.8.20") == "usb0")
        #expect(routes.interface(toward: "192.168.9.20") == "eth0")
        #expect(routes.interface(toward: "127.0.0.1") == "eth0", "the default route matches any address")
        #expect(
            NetworkRoutes(root: try TestRun.makeTemporaryDirectory("noroutes")).interface(toward: "127.0.0.1") == "lo")
        #expect(routes.isCellular("wwan0") && routes.isCellular("usb0"))
        #expect(!routes.isCellular("eth0") && !routes.isCellular("lo"))
    }

    /// Cellular access off and the route to the origin cellular (a fake root marks `lo` as a
    /// modem): the task waits, saying so; allowed again, it runs to the end by itself.
    @Test(.requires(.nginx)) func aTaskWaitsForANetworkThatIsNotCellular() async throws {
        let origin = try await StaticOrigin.start(files: ["a.mp4": 100_000])
        let root = try TestRun.makeTemporaryDirectory("netroot-lo")
        let folder = root.appendingPathComponent("sys/class/net/lo")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "INTERFACE=lo\nDEVTYPE=wwan\n".write(
            to: folder.appendingPathComponent("uevent"), atomically: true, encoding: .utf8)
        let manager = try await ManagerSupport.manager(networkRoot: root)
        try await manager.setAllowsCellularAccess(false)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url("a.mp4"), kind: .file), autoStart: true)
        try await recorder.wait(for: info.id, .waiting, timeout: .seconds(10))
        let reason = try #require(await manager.info(info.id)?.lastError)
        #expect(reason.contains("the route to 127.0.0.1 leaves through lo, and cellular access is off"), "\(reason)")
        try await manager.setAllowsCellularAccess(true)
        try await recorder.wait(for: info.id, .success, timeout: .seconds(20))
        await manager.close()
        let reopened = try await ManagerSupport.manager(directory: manager.directory, runsTasks: false)
        #expect(await reopened.allowsCellularAccess)
        await reopened.close()
        await origin.stop()
    }

    /// A floor above the free space of the download's file system: the task waits, naming it;
    /// the floor lowered, it runs by itself. The floor is saved.
    @Test(.requires(.nginx)) func aTaskWaitsForFreeSpace() async throws {
        let origin = try await StaticOrigin.start(files: ["a.mp4": 100_000])
        let manager = try await ManagerSupport.manager()
        try await manager.setFreeSpaceFloor(Int64.max / 2)
        let recorder = EventRecorder(await manager.events())
        let info = try await manager.add(DownloadRequest(url: origin.url("a.mp4"), kind: .file), autoStart: true)
        try await recorder.wait(for: info.id, .waiting, timeout: .seconds(10))
        let reason = try #require(await manager.info(info.id)?.lastError)
        #expect(reason.hasPrefix("waiting for free space: the file system at "), "\(reason)")
        try await manager.setFreeSpaceFloor(1 << 20)
        try await recorder.wait(for: info.id, .success, timeout: .seconds(20))
        await manager.close()
        let reopened = try await ManagerSupport.manager(directory: manager.directory, runsTasks: false)
        #expect(await reopened.freeSpaceFloor == 1 << 20)
        await reopened.close()
        await origin.stop()
    }
}
