/// Cuts PES packets and sections into 188-byte transport stream packets (ISO/IEC 13818-1
/// §2.4.3.2), keeping a continuity counter per PID.
///
/// The payload is taken as a list of byte slices (start codes, NAL units still inside their FLV
/// tag) and copied once, straight into the output.
public struct TSPacketWriter: Sendable {
    /// The size of a transport stream packet.
    public static let packetSize = 188
    private static let headerSize = 4
    private static let syncByte: UInt8 = 0x47

    /// The continuity counter of each PID seen, in a list: a program has a handful of PIDs.
    private var counters: [Counter] = []
    /// Stuffing bytes to copy from.
    private static let stuffing = [UInt8](repeating: 0xFF, count: packetSize)

    private struct Counter: Sendable {
        var pid: UInt16
        var next: UInt8
    }

    public init() {}

    /// A writer whose next packet on `pid` carries `continuityCounter`.
    public init(continuityCounter: UInt8, pid: UInt16) {
        counters = [Counter(pid: pid, next: continuityCounter & 0x0F)]
    }

    /// The continuity counter the next packet on `pid` carries.
    public func nextContinuityCounter(pid: UInt16) -> UInt8 { counters.first { $0.pid == pid }?.next ?? 0 }

    /// Appends one packet holding `section` after a pointer_field of 0, stuffed with 0xFF.
    ///
    /// - Precondition: The section fits one packet (183 bytes), as a single program's tables do.
    public mutating func writeSection(_ section: [UInt8], pid: UInt16, into output: inout [UInt8]) {
        precondition(section.count <= Self.packetSize - Self.headerSize - 1, "a section longer than one packet")
        let start = output.count
        writeHeader(pid: pid, unitStart: true, hasAdaptation: false, into: &output)
        output.append(0x00)  // pointer_field
        output += section
        output.append(contentsOf: Self.stuffing[0..<(start + Self.packetSize - output.count)])
    }

    /// Appends the packets of one PES packet: `header`, then `payload` piece by piece.
    ///
    /// The output grows once by the whole run of packets, which are then filled in place: the
    /// payload is copied once, with no per-packet array operations.
    ///
    /// - Parameters:
    ///   - pcr: A program clock reference base (90 kHz) for the first packet's adaptation field.
    ///   - randomAccess: Sets random_access_indicator in the first packet (a key frame starts here).
    public mutating func writePES(
        _ header: PESHeader, payload: [ArraySlice<UInt8>], pid: UInt16, pcr: UInt64?, randomAccess: Bool,
        into output: inout [UInt8]
    ) {
        var headerBytes: [UInt8] = []
        headerBytes.reserveCapacity(header.size)
        header.write(into: &headerBytes)
        let total = headerBytes.count + payload.reduce(0) { $0 + $1.count }
        // The first packet's adaptation field: length byte, flags byte, and the PCR.
        let firstAdaptation = pcr != nil ? 8 : randomAccess ? 2 : 0
        let firstRoom = Self.packetSize - Self.headerSize - firstAdaptation
        let roomAfter = Self.packetSize - Self.headerSize
        let packets = total <= firstRoom ? 1 : 1 + (total - firstRoom + roomAfter - 1) / roomAfter
        var counter = takeContinuityCounters(pid: pid, count: packets)
        let start = output.count
        Self.grow(&output, by: packets * Self.packetSize)
        var pieces = PieceReader(first: headerBytes[...], rest: payload)
        output.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress! + start
            var remaining = total
            for index in 0..<packets {
                let packet = base + index * Self.packetSize
                let isFirst = index == 0
                var adaptation = isFirst ? firstAdaptation : 0
                let room = roomAfter - adaptation
                if remaining < room { adaptation += room - remaining }
                packet[0] = Self.syncByte
                packet[1] = (isFirst ? 0x40 : 0) | UInt8(truncatingIfNeeded: pid >> 8) & 0x1F
                packet[2] = UInt8(truncatingIfNeeded: pid)
                packet[3] = (adaptation > 0 ? 0x30 : 0x10) | counter
                counter = (counter + 1) & 0x0F
                if adaptation > 0 {
                    packet[4] = UInt8(adaptation - 1)
                    if adaptation > 1 {
                        packet[5] = (isFirst && randomAccess ? 0x40 : 0) | (isFirst && pcr != nil ? 0x10 : 0)
                        if isFirst, let pcr { Self.writePCR(base: pcr, at: packet + 6) }
                        // The rest of the adaptation field is stuffing: the output grew with 0xFF.
                    }
                }
                let count = roomAfter - adaptation
                pieces.copy(count, to: packet + Self.headerSize + adaptation)
                remaining -= count
            }
        }
    }

    /// Reserves the next `count` continuity counters of `pid`, returning the first.
    private mutating func takeContinuityCounters(pid: UInt16, count: Int) -> UInt8 {
        var index = 0
        while index < counters.count && counters[index].pid != pid { index += 1 }
        if index == counters.count { counters.append(Counter(pid: pid, next: 0)) }
        let first = counters[index].next
        counters[index].next = UInt8(truncatingIfNeeded: (Int(first) + count) & 0x0F)
        return first
    }

    /// Appends `count` stuffing bytes to `output`, a block at a time.
    private static func grow(_ output: inout [UInt8], by count: Int) {
        var left = count
        while left > 0 {
            let step = min(left, stuffingBlock.count)
            output.append(contentsOf: stuffingBlock[0..<step])
            left -= step
        }
    }

    /// 0xFF bytes for growing the output.
    private static let stuffingBlock = [UInt8](repeating: 0xFF, count: 64 << 10)

    /// program_clock_reference at `pointer`: a 33-bit base, 6 reserved bits, a 9-bit extension of 0.
    static func writePCR(base: UInt64, at pointer: UnsafeMutablePointer<UInt8>) {
        let value = base & 0x1_FFFF_FFFF
        pointer[0] = UInt8(truncatingIfNeeded: value >> 25)
        pointer[1] = UInt8(truncatingIfNeeded: value >> 17)
        pointer[2] = UInt8(truncatingIfNeeded: value >> 9)
        pointer[3] = UInt8(truncatingIfNeeded: value >> 1)
        pointer[4] = UInt8(truncatingIfNeeded: value << 7) | 0x7E
        pointer[5] = 0x00
    }

    private mutating func writeHeader(pid: UInt16, unitStart: Bool, hasAdaptation: Bool, into output: inout [UInt8]) {
        let counter = takeContinuityCounters(pid: pid, count: 1)
        output.append(Self.syncByte)
        output.append((unitStart ? 0x40 : 0) | UInt8(truncatingIfNeeded: pid >> 8) & 0x1F)
        output.append(UInt8(truncatingIfNeeded: pid))
        // adaptation_field_control: '01' payload only, '11' adaptation field then payload.
        output.append((hasAdaptation ? 0x30 : 0x10) | counter)
    }
}

/// Walks a list of byte slices as one sequence.
private struct PieceReader {
    private var current: ArraySlice<UInt8>
    private let rest: [ArraySlice<UInt8>]
    private var next = 0

    init(first: ArraySlice<UInt8>, rest: [ArraySlice<UInt8>]) {
        current = first
        self.rest = rest
    }

    mutating func copy(_ count: Int, to destination: UnsafeMutablePointer<UInt8>) {
        var count = count
        var destination = destination
        while count > 0 {
            while current.isEmpty {
                guard next < rest.count else { return }
                current = rest[next]
                next += 1
            }
            let taken = min(count, current.count)
            current.withUnsafeBufferPointer { source in destination.update(from: source.baseAddress!, count: taken) }
            current = current[(current.startIndex + taken)..<current.endIndex]
            destination += taken
            count -= taken
        }
    }
}
