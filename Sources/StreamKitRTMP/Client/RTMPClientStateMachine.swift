import StreamKitAMF
import StreamKitCore
import StreamKitFLV

/// The client side of one RTMP connection as a state machine: handshake, `connect`,
/// `createStream`, then `play` or `publish`, and the control traffic around them
/// (acknowledgements, window sizes, pings, chunk sizes).
///
/// It does no I/O. The owner feeds it the bytes the server sent and performs the returned
/// actions: send bytes, deliver media, report progress or failure. It composes the smaller
/// machines: ``RTMPHandshake``, ``ChunkDecoder`` and ``ChunkEncoder``.
public struct RTMPClientStateMachine: Sendable {
    /// How the client behaves.
    public struct Configuration: Hashable, Sendable {
        /// The plain handshake, or the Flash Player 9 digest handshake for servers that require it.
        public var handshake: RTMPHandshake.Mode
        /// The chunk size announced to the server right after the handshake (nginx-rtmp accepts up to 10 MB).
        public var outgoingChunkSize: Int
        /// The acknowledgement window announced in answer to Set Peer Bandwidth.
        public var windowAcknowledgementSize: UInt32
        /// The buffer length sent with `play` (Set Buffer Length).
        public var playBufferMilliseconds: UInt32
        /// The `start` argument of `play`: -2 live or recorded, -1 live only.
        public var playStart: Double
        /// The type argument of `publish`.
        public var publishType: String
        /// What the server may make the chunk decoder hold.
        public var limits: ChunkDecoder.Limits
        /// The Enhanced RTMP codecs `connect` announces; none by default, as some servers fail on them.
        public var enhancedCodecs: EnhancedCodecs

        public init(
            handshake: RTMPHandshake.Mode = .plain, outgoingChunkSize: Int = 65_536,
            windowAcknowledgementSize: UInt32 = 2_500_000, playBufferMilliseconds: UInt32 = 3_000,
            playStart: Double = -2, publishType: String = "live", limits: ChunkDecoder.Limits = ChunkDecoder.Limits(),
            enhancedCodecs: EnhancedCodecs = .none
        ) {
            self.handshake = handshake
            self.outgoingChunkSize = outgoingChunkSize
            self.windowAcknowledgementSize = windowAcknowledgementSize
            self.playBufferMilliseconds = playBufferMilliseconds
            self.playStart = playStart
            self.publishType = publishType
            self.limits = limits
            self.enhancedCodecs = enhancedCodecs
        }
    }

    /// Whether the connection plays a stream or publishes one.
    public enum Role: Hashable, Sendable {
        case play
        case publish
    }

    /// What the owner must do.
    public enum Action: Hashable, Sendable {
        /// Send these bytes to the server.
        case send(ByteBuffer)
        /// The handshake finished.
        case handshakeCompleted(HandshakeResult)
        /// `connect` succeeded; the status of its `_result`, if it carried one.
        case connected(RTMPStatus?)
        /// `NetStream.Play.Start` or `NetStream.Publish.Start`: media may flow on `streamID`.
        case streamStarted(streamID: UInt32, RTMPStatus)
        /// Audio, video or data from the server, with aggregates unpacked.
        case media(RTMPMessage)
        /// An `onStatus` that changes nothing here (`NetStream.Play.PublishNotify`, ...).
        case status(RTMPStatus)
        /// The stream ended: `Play.UnpublishNotify`, `Play.Stop`, `Play.Complete`, Stream EOF.
        case streamEnded(reason: String)
        /// The session failed; the owner closes the connection.
        case failed(RTMPError)
    }

    /// Where the session stands.
    public enum Phase: Hashable, Sendable {
        case idle
        case handshaking
        case connecting
        case creatingStream
        case startingStream
        case streaming
        case finishing
        case failed
    }

    /// Chunk stream ids used for what the client sends.
    enum ChunkStreamID {
        static let control: UInt32 = 2
        static let command: UInt32 = 3
        static let audio: UInt32 = 4
        static let data: UInt32 = 5
        static let video: UInt32 = 6
    }

    public let url: RTMPURL
    public let role: Role
    public let configuration: Configuration
    public private(set) var phase = Phase.idle
    /// The phase the session was in when it failed.
    public private(set) var failedIn: Phase?
    /// The message stream id `createStream` returned.
    public private(set) var streamID: UInt32?
    /// The bytes received so far, modulo 2^32 (the acknowledgement sequence number).
    public var bytesReceived: UInt32 { acknowledgements.received }
    /// The acknowledgement window the server set; acknowledgements are sent each time it fills.
    public var acknowledgementWindow: UInt32? { acknowledgements.size }
    /// The last sequence number the server acknowledged.
    public private(set) var lastAcknowledgementFromServer: UInt32?

    private var handshake: RTMPHandshake
    private var decoder: ChunkDecoder
    private var encoder = ChunkEncoder()
    private var input = ByteBuffer()
    private var output = ByteBuffer()
    private var acknowledgements = AcknowledgementWindow()
    private var announcedWindow: UInt32?
    private var nextTransactionID: Double = 1
    private var connectTransaction: Double = 0
    private var createStreamTransaction: Double = 0

    /// Prepares a session for `url`; the clock reading and random source are for the handshake.
    public init(
        url: RTMPURL, role: Role, configuration: Configuration = Configuration(), uptime: UInt32,
        random: inout some RandomNumberGenerator
    ) {
        self.url = url
        self.role = role
        self.configuration = configuration
        handshake = RTMPHandshake(mode: configuration.handshake, uptime: uptime, random: &random)
        decoder = ChunkDecoder(limits: configuration.limits)
    }

    /// Starts the handshake: the C0 and C1 bytes to send.
    public mutating func start() -> [Action] {
        precondition(phase == .idle, "the session has already started")
        phase = .handshaking
        guard case .send(let bytes) = handshake.start() else { preconditionFailure("the handshake starts by sending") }
        return [.send(ByteBuffer(bytes: bytes))]
    }

    /// The configuration to connect with once more after `error` ended this session in answer to
    /// a `connect` that announced Enhanced RTMP codecs: the same without them. Servers whose AMF
    /// decoders do not know the strict array of `fourCcList` close or reset the connection there,
    /// and some refuse the connect. `nil` when trying again would not help.
    public func retryConfiguration(after error: RTMPError) -> Configuration? {
        let answeredConnect = [RTMPError.Kind.connectionClosed, .connectionLost, .connectRejected].contains(error.kind)
        guard (failedIn ?? phase) == .connecting, answeredConnect, !configuration.enhancedCodecs.isEmpty else {
            return nil
        }
        var plain = configuration
        plain.enhancedCodecs = .none
        return plain
    }

    /// Processes bytes the server sent.
    public mutating func receive(_ bytes: some Collection<UInt8>) -> [Action] {
        var buffer = input
        input = ByteBuffer()
        buffer.writeBytes(bytes)
        let actions = receive(&buffer, newBytes: bytes.count)
        input = buffer
        return actions
    }

    /// Processes the bytes in `buffer`, the last `newBytes` of which have just arrived; what
    /// cannot be used yet stays in `buffer` for the next call. The owner keeps one buffer for
    /// the connection, so bytes are copied once from the socket.
    public mutating func receive(_ buffer: inout ByteBuffer, newBytes: Int) -> [Action] {
        guard phase != .failed, phase != .idle else { return [] }
        acknowledgements.add(newBytes)
        var actions: [Action] = []
        do {
            if phase == .handshaking {
                for action in try handshake.receive(&buffer) {
                    switch action {
                    case .send(let reply):
                        output.writeBytes(reply)
                    case .complete(let result):
                        actions.append(.handshakeCompleted(result))
                        beginConnect()
                    }
                }
            }
            if phase != .handshaking {
                while let message = try decoder.decode(&buffer) {
                    try handle(message, into: &actions)
                    if phase == .failed { break }
                }
            }
            acknowledgeIfDue()
        } catch {
            actions.append(fail(error))
        }
        if buffer.readableBytes == 0 || buffer.readerIndex > 1 << 16 { buffer.discardReadBytes() }
        return flushed(actions)
    }

    /// Sends an audio, video or script data tag on the published stream; script data named
    /// `onMetaData` goes out as `@setDataFrame` so the server keeps it for players that join later.
    public mutating func send(_ tag: FLVTag) -> [Action] {
        guard phase == .streaming, role == .publish, let streamID else {
            return [.failed(.invalidState("media can be sent only while publishing (phase \(phase))"))]
        }
        let message: RTMPMessage
        let chunkStream: UInt32
        switch tag.type {
        case .audio:
            message = RTMPMessage(
                type: .audio, streamID: streamID, timestamp: RTMPTimestamp(tag.timestamp), payload: tag.data)
            chunkStream = ChunkStreamID.audio
        case .video:
            message = RTMPMessage(
                type: .video, streamID: streamID, timestamp: RTMPTimestamp(tag.timestamp), payload: tag.data)
            chunkStream = ChunkStreamID.video
        default:
            var payload = tag.data
            if let script = try? FLVScriptData(data: tag.data), script.name == FLVScriptData.onMetaData {
                payload = script.setDataFrameData
            }
            message = RTMPMessage(
                type: .amf0Data, streamID: streamID, timestamp: RTMPTimestamp(tag.timestamp), payload: payload)
            chunkStream = ChunkStreamID.data
        }
        encoder.encode(message, chunkStreamID: chunkStream, into: &output)
        return flushed([])
    }

    /// Ends the stream politely: `FCUnpublish` and `deleteStream` for a publisher, `deleteStream`
    /// for a player. The owner may close the connection once the bytes are sent.
    public mutating func finish() -> [Action] {
        guard phase == .streaming || phase == .startingStream, let streamID else {
            phase = .finishing
            return []
        }
        if role == .publish {
            sendCommand(.fcUnpublish(transactionID: takeTransactionID(), stream: url.streamName))
        }
        sendCommand(.deleteStream(transactionID: takeTransactionID(), streamID: streamID))
        phase = .finishing
        return flushed([])
    }

    // MARK: Incoming messages

    private mutating func handle(_ message: RTMPMessage, into actions: inout [Action]) throws(RTMPError) {
        switch message.type {
        case .audio, .video, .amf0Data, .amf3Data:
            if phase == .streaming || phase == .startingStream { actions.append(.media(message)) }
        case .aggregate:
            for part in try AggregateMessage.unpack(message) { try handle(part, into: &actions) }
        case .amf0Command, .amf3Command:
            try handleCommand(RTMPCommand(message: message), into: &actions)
        case .setChunkSize, .abort, .acknowledgement, .userControl, .windowAcknowledgementSize, .setPeerBandwidth:
            try handleControl(message, into: &actions)
        default:
            break  // shared objects and edge messages carry nothing a player or publisher needs
        }
    }

    private mutating func handleControl(_ message: RTMPMessage, into actions: inout [Action]) throws(RTMPError) {
        guard let control = try RTMPControlMessage(message) else { return }
        switch control {
        case .setChunkSize, .abort:
            break  // applied by the decoder
        case .acknowledgement(let sequenceNumber):
            lastAcknowledgementFromServer = sequenceNumber
        case .windowAcknowledgementSize(let size):
            acknowledgements.size = size == 0 ? nil : size
        case .setPeerBandwidth(let size, _):
            if announcedWindow != size {
                announcedWindow = size
                sendControl(.windowAcknowledgementSize(size))
            }
        case .userControl(let event):
            switch event {
            case .pingRequest(let timestamp):
                sendControl(.userControl(.pingResponse(timestamp: timestamp)))
            case .streamEOF(let id) where id == streamID && phase == .streaming && role == .play:
                actions.append(.streamEnded(reason: "Stream EOF"))
            default:
                break
            }
        }
    }

    private mutating func handleCommand(_ command: RTMPCommand, into actions: inout [Action]) throws(RTMPError) {
        let status = RTMPStatus([command.commandObject] + command.arguments)
        switch command.name {
        case "_result":
            if phase == .connecting && command.transactionID == connectTransaction {
                actions.append(.connected(status))
                beginCreateStream()
            } else if phase == .creatingStream && command.transactionID == createStreamTransaction {
                guard let number = command.arguments.first?.numberValue, number >= 0, number <= Double(UInt32.max)
                else {
                    throw .malformedMessage("createStream answered without a stream id")
                }
                beginStream(UInt32(number))
            }
        case "_error":
            if phase == .connecting && command.transactionID == connectTransaction {
                throw .connectRejected(
                    application: url.application, code: status?.code, description: status?.description)
            } else if phase == .creatingStream && command.transactionID == createStreamTransaction {
                throw .commandFailed("createStream", code: status?.code, description: status?.description)
            }
        // Answers to releaseStream, FCPublish and the like are not awaited.
        case "onStatus":
            guard let status else { return }
            try handleStatus(status, into: &actions)
        case "close":
            if phase == .streaming || phase == .startingStream {
                actions.append(.streamEnded(reason: "the server sent close"))
            }
        default:
            break  // onBWDone, onFCPublish, _checkbw, ...
        }
    }

    private mutating func handleStatus(_ status: RTMPStatus, into actions: inout [Action]) throws(RTMPError) {
        switch status.code {
        case "NetStream.Play.Start" where role == .play && phase == .startingStream,
            "NetStream.Publish.Start" where role == .publish && phase == .startingStream:
            phase = .streaming
            actions.append(.streamStarted(streamID: streamID ?? 0, status))
        case "NetStream.Play.StreamNotFound":
            throw .streamNotFound(url.streamName, code: status.code, description: status.description)
        case "NetStream.Publish.BadName":
            throw .badName(url.streamName, code: status.code, description: status.description)
        case "NetStream.Play.UnpublishNotify", "NetStream.Play.Stop", "NetStream.Play.Complete":
            if role == .play && (phase == .streaming || phase == .startingStream) {
                actions.append(.streamEnded(reason: status.code))
            } else {
                actions.append(.status(status))
            }
        default:
            if status.level == "error" && phase != .finishing {
                let command = role == .play ? "play" : "publish"
                throw .commandFailed(command, code: status.code, description: status.description)
            }
            actions.append(.status(status))
        }
    }

    // MARK: Outgoing commands

    private mutating func beginConnect() {
        phase = .connecting
        let size = configuration.outgoingChunkSize
        sendControl(.setChunkSize(UInt32(size)))
        encoder.setChunkSize(size)
        connectTransaction = takeTransactionID()
        sendCommand(
            .connect(
                transactionID: connectTransaction, url: url, forPublishing: role == .publish,
                enhancedCodecs: configuration.enhancedCodecs))
    }

    private mutating func beginCreateStream() {
        phase = .creatingStream
        if role == .publish {
            sendCommand(.releaseStream(transactionID: takeTransactionID(), stream: url.streamName))
            sendCommand(.fcPublish(transactionID: takeTransactionID(), stream: url.streamName))
        }
        createStreamTransaction = takeTransactionID()
        sendCommand(.createStream(transactionID: createStreamTransaction))
    }

    private mutating func beginStream(_ id: UInt32) {
        streamID = id
        phase = .startingStream
        switch role {
        case .play:
            sendControl(
                .userControl(.setBufferLength(streamID: id, milliseconds: configuration.playBufferMilliseconds)))
            sendCommand(.play(stream: url.streamName, start: configuration.playStart), streamID: id)
        case .publish:
            sendCommand(.publish(stream: url.streamName, type: configuration.publishType), streamID: id)
        }
    }

    private mutating func takeTransactionID() -> Double {
        defer { nextTransactionID += 1 }
        return nextTransactionID
    }

    private mutating func sendCommand(_ command: RTMPCommand, streamID: UInt32 = 0) {
        encoder.encode(command.message(streamID: streamID), chunkStreamID: ChunkStreamID.command, into: &output)
    }

    private mutating func sendControl(_ control: RTMPControlMessage) {
        encoder.encode(control.message, chunkStreamID: ChunkStreamID.control, into: &output)
    }

    /// §5.4.3: an acknowledgement each time the server's window of bytes has arrived.
    private mutating func acknowledgeIfDue() {
        guard phase != .handshaking, phase != .failed, let sequenceNumber = acknowledgements.due() else { return }
        sendControl(.acknowledgement(sequenceNumber: sequenceNumber))
    }

    private mutating func fail(_ error: RTMPError) -> Action {
        failedIn = phase
        phase = .failed
        return .failed(error)
    }

    /// Puts the bytes waiting to be sent first, so that answers (acknowledgements, pongs, the next
    /// command) leave before the owner acts on events.
    private mutating func flushed(_ actions: [Action]) -> [Action] {
        guard output.readableBytes > 0 else { return actions }
        let bytes = output
        output = ByteBuffer()
        return [.send(bytes)] + actions
    }
}

/// Counts received bytes for acknowledgements (RTMP 1.0 §5.4.3): the sequence number is the
/// byte count modulo 2^32, and one is due each time a window's worth has arrived since the last.
public struct AcknowledgementWindow: Hashable, Sendable {
    /// The window the peer set with Window Acknowledgement Size; none are sent while it is `nil`.
    public var size: UInt32?
    /// Bytes received, modulo 2^32.
    public private(set) var received: UInt32
    private var lastAcknowledged: UInt32

    /// Starts counting at `received` (0 for a new connection).
    public init(received: UInt32 = 0) {
        self.received = received
        lastAcknowledged = received
    }

    /// Counts `count` more bytes.
    public mutating func add(_ count: Int) { received &+= UInt32(truncatingIfNeeded: count) }

    /// The sequence number to acknowledge now, if a window has filled since the last acknowledgement.
    public mutating func due() -> UInt32? {
        guard let size, received &- lastAcknowledged >= size else { return nil }
        lastAcknowledged = received
        return received
    }
}
