import Foundation
import StreamKitCore

/// What must hold for a task to run, as a value: enough free space where it writes, and no
/// cellular route to its origin when cellular access is off (the Linux form of the original
/// design's "allow cellular access" and of media3's `Requirements`). ``unmet(_:)`` decides from
/// facts read elsewhere (``DownloadRequirements/Facts``), so that tests drive it without disks or
/// networks.
struct DownloadRequirements: Hashable, Sendable {
    /// Whether tasks may run over a cellular interface.
    var allowsCellularAccess = true
    /// The least free space the download's file system must keep, or `nil` for the default: the
    /// smaller of 256 MiB and 1% of the file system.
    var freeSpaceFloor: Int64?

    /// What was found for one task.
    struct Facts: Hashable, Sendable {
        /// The file system the task writes to, when it could be examined.
        var space: FileSystemSpace?
        /// The host the task's requests go to.
        var host: String
        /// The interface the route to the host leaves through, when known.
        var interface: String?
        /// Whether that interface is cellular.
        var interfaceIsCellular = false
    }

    /// The floor for a file system of `totalBytes`.
    func floor(totalBytes: Int64) -> Int64 { freeSpaceFloor ?? min(256 << 20, totalBytes / 100) }

    /// Why the task cannot run now, or `nil` when it can.
    func unmet(_ facts: Facts) -> String? {
        if let space = facts.space, space.availableBytes < floor(totalBytes: space.totalBytes) {
            let floor = FileSystemSpace.format(floor(totalBytes: space.totalBytes))
            return "waiting for free space: \(space), below the floor of \(floor)"
        }
        if !allowsCellularAccess && facts.interfaceIsCellular {
            return "waiting for a network that is not cellular: the route to \(facts.host) leaves through "
                + "\(facts.interface ?? "a cellular interface"), and cellular access is off"
        }
        return nil
    }
}

/// Which interface the route to an IPv4 address leaves through, and whether it is cellular, read
/// from `/proc/net/route` and `/sys/class/net` under a root (`/`, or a fake one in tests).
struct NetworkRoutes: Sendable {
    let root: URL

    /// The interface of the most specific route to `host` (a name or an IPv4 address); `lo` for a
    /// loopback address no route names.
    func interface(toward host: String) -> String? {
        guard let address = Self.ipv4(host) else { return nil }
        let table = (try? String(contentsOf: root.appendingPathComponent("proc/net/route"), encoding: .utf8)) ?? ""
        var best: (interface: String, prefix: Int)?
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, let destination = UInt32(fields[1], radix: 16),
                let mask = UInt32(fields[7], radix: 16)
            else { continue }
            // The kernel writes addresses in host order of a little-endian machine: as they are in memory.
            guard address & mask == destination & mask else { continue }
            let prefix = mask.nonzeroBitCount
            if best == nil || prefix > best!.prefix { best = (String(fields[0]), prefix) }
        }
        if let best { return best.interface }
        return address & 0xFF == 127 ? "lo" : nil
    }

    /// Whether `interface` is cellular: `DEVTYPE=wwan` in its uevent, or a `wwan` name.
    func isCellular(_ interface: String) -> Bool {
        if interface.hasPrefix("wwan") { return true }
        let uevent = root.appendingPathComponent("sys/class/net/\(interface)/uevent")
        let text = (try? String(contentsOf: uevent, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").contains("DEVTYPE=wwan")
    }

    /// `host` as `/proc/net/route` writes addresses (the first octet in the lowest byte), when it
    /// is a dotted IPv4 address or resolves to one.
    static func ipv4(_ host: String) -> UInt32? {
        var address = in_addr()
        if inet_pton(AF_INET, host, &address) == 1 { return address.s_addr }
        guard let resolved = try? ResolvedAddress.resolve(host: host, port: 80).first(where: { $0.family == AF_INET }),
            resolved.bytes.count == 4
        else { return nil }
        return resolved.bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }
}
