import StreamKitCore

/// The client side of the RTMP handshake (RTMP 1.0 §5.2): send C0 and C1, read S0 and S1,
/// answer with C2, read S2.
///
/// ``Mode/plain`` is the handshake of the specification: C1 carries a time, four zero bytes and
/// random bytes, and C2 echoes S1. ``Mode/digest`` is the Flash Player 9 handshake that some
/// servers require: C1 carries a player version and an HMAC-SHA256 digest at an offset derived
/// from its own bytes; the server's S1 digest and S2 signature are checked, and C2 is signed with
/// a key derived from S1's digest. A server that answers a digest C1 with a plain S1 gets a plain C2.
///
/// The clock reading and the random source are given to the initializer, so the state machine
/// itself is deterministic.
public struct RTMPHandshake: Sendable {
    /// Which handshake to perform.
    public enum Mode: String, Hashable, Sendable, CaseIterable {
        case plain
        case digest
    }

    /// What the owner must do next.
    public enum Action: Hashable, Sendable {
        /// Send these bytes to the server.
        case send([UInt8])
        /// The handshake is complete; the chunk stream starts with the bytes left in the buffer.
        case complete(HandshakeResult)
    }

    /// §5.2.2: the version byte of C0 and S0.
    public static let version: UInt8 = 3
    /// §5.2.3: the size of C1, S1, C2 and S2.
    public static let packetSize = 1536

    private enum State: Sendable {
        case initial
        case awaitingS0S1
        case awaitingS2
        case complete
    }

    public let mode: Mode
    private var state = State.initial
    private let c1: [UInt8]
    /// The offset of C1's digest (digest mode only).
    private let c1DigestOffset: Int
    /// Random bytes for a digest-mode C2.
    private let c2Random: [UInt8]
    private var result = HandshakeResult()

    /// Prepares C1 from `uptime` (the C1 time field, milliseconds) and `random`.
    public init(mode: Mode = .plain, uptime: UInt32, random: inout some RandomNumberGenerator) {
        self.mode = mode
        var bytes = Self.randomBytes(Self.packetSize, using: &random)
        for index in 0..<4 { bytes[index] = UInt8(truncatingIfNeeded: uptime >> (24 - 8 * index)) }
        for index in 4..<8 { bytes[index] = 0 }
        c2Random = Self.randomBytes(Self.packetSize, using: &random)
        switch mode {
        case .plain:
            c1DigestOffset = 0
        case .digest:
            // Flash Player 9.0.124.2, the version servers that check digests accept.
            bytes[4] = 9
            bytes[5] = 0
            bytes[6] = 124
            bytes[7] = 2
            let offset = HandshakeDigest.digestOffset(in: bytes, base: 8)
            let digest = HandshakeDigest.sign(
                bytes, excludingDigestAt: offset, key: HandshakeDigest.playerKey.prefix(30))
            bytes.replaceSubrange(offset..<(offset + 32), with: digest)
            c1DigestOffset = offset
        }
        c1 = bytes
    }

    /// `count` random bytes, eight from each draw (the system generator makes a system call per draw).
    private static func randomBytes(_ count: Int, using random: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            let word = random.next()
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return Array(bytes.prefix(count))
    }

    /// C0 and C1, to send first.
    public mutating func start() -> Action {
        precondition(state == .initial, "the handshake has already started")
        state = .awaitingS0S1
        return .send([Self.version] + c1)
    }

    /// Reads S0, S1 and S2 from `buffer` as they arrive.
    ///
    /// - Returns: The actions to take now: send C2, then complete (possibly both at once).
    /// - Throws: ``RTMPError`` (handshake failed) for a wrong version or a bad S2 signature.
    public mutating func receive(_ buffer: inout ByteBuffer) throws(RTMPError) -> [Action] {
        var actions: [Action] = []
        if state == .awaitingS0S1 {
            if let s0 = buffer.getByte(at: 0), s0 != Self.version {
                throw .handshakeFailed(
                    "the server answered with RTMP version \(s0) (S0), expected \(Self.version)"
                        + (s0 == 6 || s0 == 8 ? "; it asks for encrypted RTMPE, which is not supported" : ""))
            }
            guard buffer.readableBytes >= 1 + Self.packetSize else { return actions }
            buffer.moveReaderIndex(forwardBy: 1)
            let s1 = buffer.readBytes(length: Self.packetSize)!
            actions.append(.send(makeC2(s1: s1)))
            state = .awaitingS2
        }
        if state == .awaitingS2 {
            guard let s2 = buffer.readBytes(length: Self.packetSize) else { return actions }
            try checkS2(s2)
            state = .complete
            actions.append(.complete(result))
        }
        return actions
    }

    /// Whether S2 has been read.
    public var isComplete: Bool { state == .complete }

    // MARK: Private

    private mutating func makeC2(s1: [UInt8]) -> [UInt8] {
        result.serverVersion = Array(s1[4..<8])
        guard mode == .digest else { return s1 }
        guard let serverDigestOffset = HandshakeDigest.findDigest(in: s1, key: HandshakeDigest.serverKey.prefix(36))
        else {
            result.serverDigestVerified = false
            return s1
        }
        result.serverDigestVerified = true
        let serverDigest = s1[serverDigestOffset..<(serverDigestOffset + 32)]
        let key = HMAC<SHA256>.authenticationCode(for: serverDigest, key: HandshakeDigest.playerKey).bytes
        var c2 = Array(c2Random[0..<(Self.packetSize - 32)])
        c2 += HMAC<SHA256>.authenticationCode(for: c2, key: key).bytes
        return c2
    }

    private mutating func checkS2(_ s2: [UInt8]) throws(RTMPError) {
        guard mode == .digest, result.serverDigestVerified == true else {
            // The plain handshake: S2 should echo C1, but servers are lax and so is the specification's use of it.
            result.serverResponseVerified = s2[8...] == c1[8...]
            return
        }
        let c1Digest = c1[c1DigestOffset..<(c1DigestOffset + 32)]
        let key = HMAC<SHA256>.authenticationCode(for: c1Digest, key: HandshakeDigest.serverKey).bytes
        let expected = HMAC<SHA256>.authenticationCode(for: s2[0..<(Self.packetSize - 32)], key: key).bytes
        guard expected[...] == s2[(Self.packetSize - 32)...] else {
            throw .handshakeFailed("the server's S2 signature does not match the digest of C1")
        }
        result.serverResponseVerified = true
    }
}

/// What the handshake learned about the server.
public struct HandshakeResult: Hashable, Sendable {
    /// The four version bytes of S1 (zero for servers that do not announce one).
    public var serverVersion: [UInt8] = [0, 0, 0, 0]
    /// In digest mode: whether S1 carried a valid server digest (`nil` in plain mode).
    public var serverDigestVerified: Bool?
    /// Whether S2 matched: the digest-mode signature, or in plain mode an echo of C1.
    public var serverResponseVerified = false

    public init() {}
}

/// The keys and digest placement of the Flash Player 9 handshake.
enum HandshakeDigest {
    /// "Genuine Adobe Flash Player 001" followed by 32 fixed bytes; C1 is signed with the first 30.
    static let playerKey: [UInt8] = Array("Genuine Adobe Flash Player 001".utf8) + fixedKeyTail
    /// "Genuine Adobe Flash Media Server 001" followed by the same 32 bytes; S1 is signed with the first 36.
    static let serverKey: [UInt8] = Array("Genuine Adobe Flash Media Server 001".utf8) + fixedKeyTail

    private static let fixedKeyTail: [UInt8] = [
        0xF0, 0xEE, 0xC2, 0x4A, 0x80, 0x68, 0xBE, 0xE8, 0x2E, 0x00, 0xD0, 0xD1, 0x02, 0x9E, 0x7E, 0x57,
        0x6E, 0xEC, 0x5D, 0x2D, 0x29, 0x80, 0x6F, 0xAB, 0x93, 0xB8, 0xE6, 0x36, 0xCF, 0xEB, 0x31, 0xAE,
    ]

    /// Where a digest sits: the sum of the four bytes at `base`, modulo 728, counted from just
    /// past those four bytes (base 8 in the first half of the packet, 772 in the second).
    static func digestOffset(in packet: [UInt8], base: Int) -> Int {
        let sum = packet[base..<(base + 4)].reduce(0) { $0 + Int($1) }
        return sum % 728 + base + 4
    }

    /// HMAC-SHA256 of the packet without the 32 digest bytes at `offset`.
    static func sign(_ packet: [UInt8], excludingDigestAt offset: Int, key: some Collection<UInt8>) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(packet[..<offset])
        hmac.update(packet[(offset + 32)...])
        return hmac.finalize().bytes
    }

    /// The offset of a valid digest, trying both placements servers use.
    static func findDigest(in packet: [UInt8], key: some Collection<UInt8>) -> Int? {
        for base in [772, 8] {
            let offset = digestOffset(in: packet, base: base)
            if sign(packet, excludingDigestAt: offset, key: key)[...] == packet[offset..<(offset + 32)] {
                return offset
            }
        }
        return nil
    }
}
