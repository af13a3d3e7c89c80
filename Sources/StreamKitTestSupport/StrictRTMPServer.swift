import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An RTMP server on 127.0.0.1 that decodes AMF0 strictly, as servers written before Enhanced
/// RTMP do (pyrtmp, rtmplite): a command holding a value of a type it does not know (the strict
/// array of `fourCcList`) makes it drop the connection at once, as their decoders' exceptions do.
///
/// It counts the media each publisher sends and relays it, untouched, to the players of the
/// same stream name (players that join late miss what came before; no sequence header is kept),
/// ending their stream with `NetStream.Play.UnpublishNotify` when the publisher stops: unlike
/// nginx-rtmp 1.2, it carries Enhanced RTMP video.
public final class StrictRTMPServer: Sendable {
    /// What one connection did.
    public struct Session: Sendable {
        /// The properties of the `connect` command object, in order; empty before `connect`.
        public var connectKeys: [String] = []
        /// Why the server dropped the connection, when it did.
        public var refusal: String?
        /// The stream name of `publish`.
        public var published: String?
        /// The stream name of `play`.
        public var played: String?
        public var audioMessages = 0
        public var videoMessages = 0
        /// Payload bytes of audio and video messages.
        public var mediaBytes = 0
    }

    /// The port it listens on.
    public let port: UInt16

    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var active = 0
        var sessions: [Session] = []
        /// The sockets of the players of each stream name.
        var players: [String: [Int32]] = [:]
    }

    /// The chunk size announced to players, so that relayed frames take few chunks.
    private static let playerChunkSize = 4_096

    /// Starts listening.
    public init() throws {
        (listener, port) = try LocalNetwork.listeningSocket(backlog: 16)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { close(listener) }

    /// `rtmp://127.0.0.1:<port>/<application>/<stream>`.
    public func url(application: String = "live", stream: String) -> String {
        "rtmp://127.0.0.1:\(port)/\(application)/\(stream)"
    }

    /// Every connection so far, in order of arrival.
    public var sessions: [Session] { state.withLock { $0.sessions } }

    /// Stops accepting, ends every connection, and waits (up to 5 s) for them to close.
    public func stop() async {
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        await LocalNetwork.waitForConnectionsToEnd { state.withLock { $0.active } }
    }

    // MARK: Private

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        LocalNetwork.acceptConnections(on: listener, until: { isStopped }) { connection in
            let index = state.withLock { state in
                state.active += 1
                state.sessions.append(Session())
                return state.sessions.count - 1
            }
            let thread = Thread { [self] in
                serve(connection, index: index)
                endPublishing(index: index)
                // Out of the relay before the descriptor can be reused.
                state.withLock { state in
                    for (name, sockets) in state.players { state.players[name] = sockets.filter { $0 != connection } }
                }
                close(connection)
                state.withLock { $0.active -= 1 }
            }
            thread.start()
        }
    }

    private func update(_ index: Int, _ change: (inout Session) -> Void) {
        state.withLock { change(&$0.sessions[index]) }
    }

    private func serve(_ connection: Int32, index: Int) {
        let read = { (count: Int) -> [UInt8]? in self.read(count, from: connection) }
        // Plain handshake: C0 C1 in, S0 S1 S2 out (S2 echoes C1), C2 in.
        guard let c0c1 = read(1_537), c0c1[0] == 3 else { return }
        write([3] + [UInt8](repeating: 0, count: 8) + (0..<1_528).map { UInt8(truncatingIfNeeded: $0) }, on: connection)
        write(Array(c0c1[1...]), on: connection)
        guard read(1_536) != nil else { return }
        var reader = StrictChunkReader()
        while !isStopped {
            switch reader.readChunk(read) {
            case .closed: return
            case .incomplete: continue
            case .message(let message):
                if !handle(message, on: connection, index: index) { return }
            }
        }
    }

    /// Handles one message; `false` drops the connection.
    private func handle(_ message: StrictRTMPMessage, on connection: Int32, index: Int) -> Bool {
        switch message.type {
        case 8, 9:
            update(index) {
                if message.type == 8 { $0.audioMessages += 1 } else { $0.videoMessages += 1 }
                $0.mediaBytes += message.payload.count
            }
            relay(message, index: index)
        case 18:
            relay(message, index: index)
        case 20:
            var decoder = StrictAMFDecoder(message.payload)
            let values: [StrictAMFValue]
            do {
                values = try decoder.decodeAll()
            } catch {
                update(index) { $0.refusal = error.description }
                return false
            }
            guard let name = values.first?.string, let transaction = values.dropFirst().first?.number else {
                update(index) { $0.refusal = "a command without a name and transaction id" }
                return false
            }
            answer(name, transaction: transaction, values: values, on: connection, index: index)
        default:
            break
        }
        return true
    }

    private func answer(
        _ name: String, transaction: Double, values: [StrictAMFValue], on connection: Int32, index: Int
    ) {
        func reply(_ values: [StrictAMFValue], streamID: UInt32 = 0) {
            let payload = StrictAMFEncoder.encode(values)
            write(
                StrictChunkReader.chunks(type: 20, streamID: streamID, chunkStream: 3, payload: payload), on: connection
            )
        }
        switch name {
        case "connect":
            update(index) { $0.connectKeys = values.count > 2 ? values[2].keys : [] }
            reply([
                .string("_result"), .number(transaction), .object([("fmsVer", .string("FMS/3,0,1,123"))]),
                .object([("level", .string("status")), ("code", .string("NetConnection.Connect.Success"))]),
            ])
        case "createStream":
            reply([.string("_result"), .number(transaction), .null, .number(1)])
        case "publish":
            let stream = values.count > 3 ? values[3].string : nil
            update(index) { $0.published = stream }
            reply(
                [
                    .string("onStatus"), .number(0), .null,
                    .object([("level", .string("status")), ("code", .string("NetStream.Publish.Start"))]),
                ], streamID: 1)
        case "play":
            guard let stream = values.count > 3 ? values[3].string : nil else { return }
            update(index) { $0.played = stream }
            let size = UInt32(Self.playerChunkSize)
            write(
                StrictChunkReader.chunks(
                    type: 1, streamID: 0, chunkStream: 2,
                    payload: (0..<4).map { UInt8(truncatingIfNeeded: size >> (24 - 8 * $0)) }),
                on: connection)
            reply(
                [
                    .string("onStatus"), .number(0), .null,
                    .object([("level", .string("status")), ("code", .string("NetStream.Play.Start"))]),
                ], streamID: 1)
            state.withLock { $0.players[stream, default: []].append(connection) }
        case "FCUnpublish", "deleteStream":
            endPublishing(index: index)
        default:
            break
        }
    }

    /// Sends a publisher's audio, video or data message to the players of its stream.
    private func relay(_ message: StrictRTMPMessage, index: Int) {
        state.withLock { state in
            guard let stream = state.sessions[index].published, let players = state.players[stream] else { return }
            let bytes = StrictChunkReader.chunks(
                type: message.type, streamID: 1, chunkStream: message.type == 8 ? 4 : message.type == 9 ? 6 : 5,
                payload: message.payload, timestamp: message.timestamp, chunkSize: Self.playerChunkSize)
            for player in players { write(bytes, on: player) }
        }
    }

    /// The publisher of connection `index` stopped: its players' stream ends.
    private func endPublishing(index: Int) {
        let payload = StrictAMFEncoder.encode([
            .string("onStatus"), .number(0), .null,
            .object([("level", .string("status")), ("code", .string("NetStream.Play.UnpublishNotify"))]),
        ])
        let bytes = StrictChunkReader.chunks(type: 20, streamID: 1, chunkStream: 3, payload: payload)
        state.withLock { state in
            guard let stream = state.sessions[index].published, let players = state.players.removeValue(forKey: stream)
            else { return }
            for player in players { write(bytes, on: player) }
        }
    }

    private func read(_ count: Int, from connection: Int32) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            if isStopped { return nil }
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let received = bytes[filled...].withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return nil }
            filled += received
        }
        return bytes
    }

    private func write(_ bytes: [UInt8], on connection: Int32) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
