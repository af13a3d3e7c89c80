import StreamKitCore
import StreamKitRTMP
import Testing

/// The handshake state machine against servers built here: plain, digest (Flash Player 9), broken.
@Suite struct HandshakeTests {
    static let playerKey = Array("Genuine Adobe Flash Player 001".utf8) + keyTail
    static let serverKey = Array("Genuine Adobe Flash Media Server 001".utf8) + keyTail
    static let keyTail: [UInt8] = hexBytes("F0EEC24A8068BEE82E00D0D1029E7E576EEC5D2D29806FAB93B8E636CFEB31AE")

    private static func offset(_ packet: [UInt8], base: Int) -> Int {
        packet[base..<(base + 4)].reduce(0) { $0 + Int($1) } % 728 + base + 4
    }

    private static func digest(_ packet: [UInt8], at offset: Int, key: some Collection<UInt8>) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(packet[..<offset])
        hmac.update(packet[(offset + 32)...])
        return hmac.finalize().bytes
    }

    private func start(_ mode: RTMPHandshake.Mode, seed: UInt64 = 1) -> (RTMPHandshake, [UInt8]) {
        var random = SplitMix64(seed: seed)
        var handshake = RTMPHandshake(mode: mode, uptime: 0x0102_0304, random: &random)
        guard case .send(let bytes) = handshake.start() else { fatalError("the handshake starts by sending") }
        return (handshake, bytes)
    }

    @Test func plainHandshakeEchoesS1() throws {
        let (initial, c0c1) = start(.plain)
        #expect(c0c1.count == 1 + 1_536 && c0c1[0] == 3)
        #expect(Array(c0c1[1..<9]) == [1, 2, 3, 4, 0, 0, 0, 0], "C1: time, then four zero bytes")
        let s1 = (0..<1_536).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let s2 = Array(c0c1[1...])
        let server = [3] + s1 + s2 + [0x02]  // plus the first byte of the chunk stream

        // Fed whole, or one byte at a time: C2 (S1 echoed) as soon as S1 is in, then completion.
        for step in [server.count, 1] {
            var handshake = initial
            var buffer = ByteBuffer()
            var actions: [RTMPHandshake.Action] = []
            var offset = 0
            while offset < server.count && !handshake.isComplete {
                buffer.writeBytes(server[offset..<min(offset + step, server.count)])
                offset += step
                actions += try handshake.receive(&buffer)
            }
            var expected = HandshakeResult()
            expected.serverVersion = Array(s1[4..<8])
            expected.serverResponseVerified = true
            #expect(actions == [.send(s1), .complete(expected)], "step \(step)")
            // Bytes after S2 stay in the buffer for the chunk stream.
            #expect(Array(buffer.readableBytesView) == (step == 1 ? [] : [0x02]))
        }
    }

    @Test func wrongVersionFails() throws {
        var (handshake, _) = start(.plain)
        var buffer = ByteBuffer(bytes: [6])
        #expect(throws: RTMPError.handshakeFailed("")) { try handshake.receive(&buffer) }
    }

    /// A digest server: it checks C1's digest, signs S1 with its key, and signs S2 with a key
    /// derived from C1's digest; the client checks both and signs C2 from S1's digest.
    @Test(arguments: [8, 772])
    func digestHandshake(serverBase: Int) throws {
        var (handshake, c0c1) = start(.digest)
        let c1 = Array(c0c1[1...])
        #expect(Array(c1[4..<8]) == [9, 0, 124, 2])
        let c1Offset = Self.offset(c1, base: 8)
        #expect(Self.digest(c1, at: c1Offset, key: Self.playerKey.prefix(30))[...] == c1[c1Offset..<(c1Offset + 32)])

        var random = SplitMix64(seed: 99)
        var s1 = (0..<1_536).map { _ in UInt8.random(in: 0...255, using: &random) }
        s1[4..<8] = [4, 5, 0, 1]
        let s1Offset = Self.offset(s1, base: serverBase)
        s1.replaceSubrange(
            s1Offset..<(s1Offset + 32), with: Self.digest(s1, at: s1Offset, key: Self.serverKey.prefix(36)))
        let s2Key = HMAC<SHA256>.authenticationCode(for: c1[c1Offset..<(c1Offset + 32)], key: Self.serverKey).bytes
        var s2 = (0..<1_504).map { _ in UInt8.random(in: 0...255, using: &random) }
        s2 += HMAC<SHA256>.authenticationCode(for: s2, key: s2Key).bytes

        var buffer = ByteBuffer(bytes: [3] + s1 + s2)
        let actions = try handshake.receive(&buffer)
        guard actions.count == 2, case .send(let c2) = actions[0], case .complete(let result) = actions[1] else {
            Issue.record("unexpected actions \(actions)")
            return
        }
        #expect(
            result.serverDigestVerified == true && result.serverResponseVerified
                && result.serverVersion == [4, 5, 0, 1])
        let c2Key = HMAC<SHA256>.authenticationCode(for: s1[s1Offset..<(s1Offset + 32)], key: Self.playerKey).bytes
        #expect(HMAC<SHA256>.authenticationCode(for: c2[..<1_504], key: c2Key).bytes[...] == c2[1_504...])

        // A forged S2 is refused.
        var (again, _) = start(.digest)
        var forged = s2
        forged[1_535] ^= 1
        var badBuffer = ByteBuffer(bytes: [3] + s1 + forged)
        #expect(throws: RTMPError.handshakeFailed("")) { try again.receive(&badBuffer) }
    }

    /// A server that answers a digest C1 with a plain S1 gets S1 back as C2.
    @Test func digestFallsBackToPlain() throws {
        var (handshake, _) = start(.digest)
        let s1 = [UInt8](repeating: 0x33, count: 1_536)
        var buffer = ByteBuffer(bytes: [3] + s1 + [UInt8](repeating: 0, count: 1_536))
        let actions = try handshake.receive(&buffer)
        #expect(actions.first == .send(s1))
        guard case .complete(let result) = actions.last else {
            Issue.record("not complete")
            return
        }
        #expect(result.serverDigestVerified == false)
    }
}
