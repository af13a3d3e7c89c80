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

    private var counters: [UInt16: UInt8] = [:]

    public init() {}

    /// A writer whose next packet on `pid` carries `continuityCounter`.
    public init(continuityCounter: UInt8, pid: UInt16) { counters[pid] = continuityCounter & 0x0F }

    /// The continuity counter the next packet on `pid` carries.
    public func nextContinuityCounter(pid: UInt16) -> UInt8 { counters[pid] ?? 0 }

    /// Appends one packet holding `section` after a pointer_field of 0, stuffed with 0xFF.
    ///
    /// - Precondition: The section fits one packet (183 bytes), as a single program's tables do.
    public mutating func writeSection(_ section: [UInt8], pid: UInt16, into output: inout [UInt8]) {
        precondition(section.count <= Self.packetSize - Self.headerSize - 1, "a section longer than one packet")
        let start = output.count
        writeHeader(pid: pid, unitStart: true, hasAdaptation: false, into: &output)
        output.append(0x00)  // pointer_field
        output += section
        output.append(contentsOf: repeatElement(0xFF, count: start + Self.packetSize - output.count))
    }

    /// Appends the packets of one PES packet: `header`, then `payload` piece by piece.
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
        var pieces = PieceReader(first: headerBytes[...], rest: payload)
        var remaining = headerBytes.count + payload.reduce(0) { $0 + $1.count }
        var isFirst = true
        output.reserveCapacity(output.count + (remaining / 184 + 2) * Self.packetSize)
        while remaining > 0 || isFirst {
            let packetStart = output.count
            // The adaptation field's fixed part: length byte, flags byte, and the PCR.
            var adaptation = 0
            if isFirst && (pcr != nil || randomAccess) { adaptation = pcr == nil ? 2 : 8 }
            let room = Self.packetSize - Self.headerSize - adaptation
            if remaining < room { adaptation += room - remaining }
            writeHeader(pid: pid, unitStart: isFirst, hasAdaptation: adaptation > 0, into: &output)
            if adaptation > 0 {
                output.append(UInt8(adaptation - 1))
                if adaptation > 1 {
                    let flags: UInt8 = (isFirst && randomAccess ? 0x40 : 0) | (isFirst && pcr != nil ? 0x10 : 0)
                    output.append(flags)
                    if isFirst, let pcr { Self.writePCR(base: pcr, into: &output) }
                    output.append(
                        contentsOf: repeatElement(
                            0xFF, count: packetStart + Self.headerSize + adaptation - output.count))
                }
            }
            let count = Self.packetSize - (output.count - packetStart)
            pieces.copy(count, into: &output)
            remaining -= count
            isFirst = false
        }
    }

    /// program_clock_reference: a 33-bit base, 6 reserved bits, a 9-bit extension of 0.
    static func writePCR(base: UInt64, into output: inout [UInt8]) {
        let value = base & 0x1_FFFF_FFFF
        output.append(UInt8(truncatingIfNeeded: value >> 25))
        output.append(UInt8(truncatingIfNeeded: value >> 17))
        output.append(UInt8(truncatingIfNeeded: value >> 9))
        output.append(UInt8(truncatingIfNeeded: value >> 1))
        output.append(UInt8(truncatingIfNeeded: value << 7) | 0x7E)
        output.append(0x00)
    }

    private mutating func writeHeader(pid: UInt16, unitStart: Bool, hasAdaptation: Bool, into output: inout [UInt8]) {
        let counter = counters[pid] ?? 0
        counters[pid] = (counter + 1) & 0x0F
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

    mutating func copy(_ count: Int, into output: inout [UInt8]) {
        var count = count
        while count > 0 {
            while current.isEmpty {
                guard next < rest.count else { return }
                current = rest[next]
                next += 1
            }
            let taken = min(count, current.count)
            output.append(contentsOf: current.prefix(taken))
            current = current.dropFirst(taken)
            count -= taken
        }
    }
}
