import StreamKitCore
import StreamKitFLV

/// One RTMP connection that plays or publishes a stream: an actor that owns an ``RTMPSocket``
/// and performs the actions of an ``RTMPClientStateMachine``.
///
/// ``open()`` connects, handshakes, sends `connect` and `createStream`, and `play` or `publish`,
/// returning once the server has started the stream. A player then pulls messages with
/// ``nextMessage(idleTimeout:)``; a publisher pushes tags with ``send(_:)`` and ends with ``finish()``.
public actor RTMPConnection {
    /// Timeouts, sizes and the client's behaviour.
    public struct Configuration: Hashable, Sendable {
        public var client: RTMPClientStateMachine.Configuration
        /// Connect timeout and the idle timeout of each read or write.
        public var socket: RTMPSocket.Configuration
        /// How long the handshake may take.
        public var handshakeTimeout: Duration
        /// How long the server may take to answer `connect`, `createStream`, `play` and `publish`.
        public var responseTimeout: Duration
        /// The most bytes read at once.
        public var readSize: Int
        /// Bytes gathered before a write while publishing.
        public var writeBatchSize: Int
        /// How an `rtmps://` URL's server is checked.
        public var tls: RTMPTLSOptions

        public init(
            client: RTMPClientStateMachine.Configuration = .init(), socket: RTMPSocket.Configuration = .init(),
            handshakeTimeout: Duration = .seconds(10), responseTimeout: Duration = .seconds(10),
            readSize: Int = 256 << 10, writeBatchSize: Int = 256 << 10, tls: RTMPTLSOptions = RTMPTLSOptions()
        ) {
            self.client = client
            self.socket = socket
            self.handshakeTimeout = handshakeTimeout
            self.responseTimeout = responseTimeout
            self.readSize = readSize
            self.writeBatchSize = writeBatchSize
            self.tls = tls
        }
    }

    /// What ``open()`` learned.
    public struct Session: Hashable, Sendable {
        public var handshake: HandshakeResult
        /// The status in `connect`'s `_result`.
        public var connectStatus: RTMPStatus?
        /// The message stream id of the played or published stream.
        public var streamID: UInt32
        /// `NetStream.Play.Start` or `NetStream.Publish.Start`.
        public var startStatus: RTMPStatus
        /// The Enhanced RTMP codecs the successful `connect` announced.
        public var enhancedCodecs: EnhancedCodecs
    }

    /// What a player receives.
    public enum PlayEvent: Hashable, Sendable {
        /// Audio, video or data.
        case media(RTMPMessage)
        /// The server ended the stream (unpublished, stopped, EOF); no more media follows.
        case ended(reason: String)
    }

    public let url: RTMPURL
    public let role: RTMPClientStateMachine.Role
    public let configuration: Configuration
    private let logger: Logger
    private let socket: RTMPSocket
    private var machine: RTMPClientStateMachine
    private var outbound = ByteBuffer()
    /// Bytes from the server not yet used by the state machine.
    private var inbox = ByteBuffer()
    /// Media and stream ends not yet taken by ``nextMessage(idleTimeout:)``, from `pendingStart` on.
    private var pending: [RTMPClientStateMachine.Action] = []
    private var pendingStart = 0
    private var handshakeResult = HandshakeResult()
    private var connectStatus: RTMPStatus?
    private var startStatus: RTMPStatus?
    private var ended: String?
    private var failure: RTMPError?
    /// Bytes received from the server, including the handshake.
    public private(set) var bytesReceived: Int64 = 0
    /// Bytes sent to the server, including the handshake.
    public private(set) var bytesSent: Int64 = 0
    /// Writes to the socket so far: how well sends were batched.
    public private(set) var writes = 0

    /// A connection to `url` that will play or publish its stream.
    public init(
        url: RTMPURL, role: RTMPClientStateMachine.Role, configuration: Configuration = Configuration(),
        logger: Logger = .disabled
    ) {
        self.url = url
        self.role = role
        self.configuration = configuration
        self.logger = logger.with("rtmp", url.description)
        socket = RTMPSocket(configuration: configuration.socket)
        machine = Self.machine(url: url, role: role, configuration: configuration.client)
    }

    /// The socket's status events.
    public nonisolated var events: AsyncStream<RTMPSocket.Event> { socket.events }

    /// Connects and starts the stream. When the server ends the connection in answer to a
    /// `connect` that announced Enhanced RTMP codecs, connects once more without them (see
    /// ``RTMPClientStateMachine/retryConfiguration(after:)``).
    ///
    /// - Throws: ``RTMPError``: connection, handshake and response timeouts, the server's refusals
    ///   (rejected connect, stream not found, bad name) with its text.
    @discardableResult
    public func open() async throws(RTMPError) -> Session {
        do {
            return try await openOnce()
        } catch {
            guard let plain = machine.retryConfiguration(after: error) else {
                await close()
                throw error
            }
            logger.info("\(error.detail); connecting once more without announcing Enhanced RTMP codecs")
            await socket.disconnect()
            restart(with: plain)
            do {
                return try await openOnce()
            } catch {
                await close()
                throw error
            }
        }
    }

    private func openOnce() async throws(RTMPError) -> Session {
        try await socket.connect(host: url.host, port: url.port, tls: url.isSecure ? configuration.tls : nil)
        logger.debug("connected to \(url.host):\(url.port)")
        try await perform(machine.start())
        try await pump(until: .handshakeDone, timeout: configuration.handshakeTimeout)
        try await pump(until: .streamStarted, timeout: configuration.responseTimeout)
        logger.info("stream started: \(startStatus?.code ?? "")")
        return Session(
            handshake: handshakeResult, connectStatus: connectStatus, streamID: machine.streamID ?? 0,
            startStatus: startStatus!, enhancedCodecs: machine.configuration.enhancedCodecs)
    }

    /// A new session on the same socket, forgetting the failed one.
    private func restart(with client: RTMPClientStateMachine.Configuration) {
        machine = Self.machine(url: url, role: role, configuration: client)
        outbound = ByteBuffer()
        inbox = ByteBuffer()
        pending.removeAll()
        pendingStart = 0
        handshakeResult = HandshakeResult()
        connectStatus = nil
        startStatus = nil
        ended = nil
        failure = nil
    }

    private static func machine(
        url: RTMPURL, role: RTMPClientStateMachine.Role, configuration: RTMPClientStateMachine.Configuration
    ) -> RTMPClientStateMachine {
        var random = SystemRandomNumberGenerator()
        let uptime = UInt32(truncatingIfNeeded: ProcessClock.milliseconds())
        return RTMPClientStateMachine(
            url: url, role: role, configuration: configuration, uptime: uptime, random: &random)
    }

    /// The next audio, video or data message of a played stream, or its end.
    ///
    /// - Parameter idleTimeout: How long to wait for media, however much control traffic arrives.
    /// - Throws: ``RTMPError``: idle timeout, the connection closing or failing without the server
    ///   ending the stream (a dropped connection), protocol violations.
    public func nextMessage(idleTimeout: Duration?) async throws(RTMPError) -> PlayEvent {
        let deadline = idleTimeout.map { ContinuousClock.now + $0 }
        while true {
            if let event = takePlayEvent() { return event }
            if let failure { throw failure }
            var waitFor: Duration?
            if let deadline {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw .idleTimeout("media", after: idleTimeout!) }
                waitFor = remaining
            }
            do {
                try await receiveOnce(timeout: waitFor)
            } catch  where error.kind == .idleTimeout && idleTimeout != nil {
                throw .idleTimeout("media", after: idleTimeout!)
            }
        }
    }

    /// Every message that has arrived, waiting for at least one: fewer hops than one at a time
    /// when media arrives in bursts. The stream's end, if any, is last.
    ///
    /// - Throws: As ``nextMessage(idleTimeout:)``.
    public func nextMessages(idleTimeout: Duration?) async throws(RTMPError) -> [PlayEvent] {
        var events = [try await nextMessage(idleTimeout: idleTimeout)]
        while case .media = events.last!, let event = takePlayEvent() { events.append(event) }
        return events
    }

    /// Sends one tag of a published stream; bytes are gathered and written in batches.
    ///
    /// - Throws: ``RTMPError`` when the server has failed the stream, or the connection fails.
    public func send(_ tag: FLVTag) async throws(RTMPError) {
        try await drainIncoming()
        try await perform(machine.send(tag), flushAt: configuration.writeBatchSize)
    }

    /// Writes every gathered byte.
    public func flush() async throws(RTMPError) {
        try await writeOutbound()
    }

    /// Ends the stream (`FCUnpublish` and `deleteStream` when publishing), lets the server read
    /// everything, and closes the connection.
    public func finish() async {
        do {
            try await writeOutbound()
            try await perform(machine.finish())
            await socket.shutdownOutput()
            // Read until the server closes, so everything sent has been read by it.
            let deadline = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < deadline {
                let bytes = try await socket.read(maxLength: configuration.readSize)
                if bytes.isEmpty { break }
                bytesReceived += Int64(bytes.count)
            }
        } catch {
            logger.debug("closing after \(error)")
        }
        await close()
    }

    /// Closes the connection at once.
    public func close() async {
        await socket.disconnect()
        await socket.finishEvents()
    }

    // MARK: Private

    private func takePlayEvent() -> PlayEvent? {
        while pendingStart < pending.count {
            let action = pending[pendingStart]
            pendingStart += 1
            if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            switch action {
            case .media(let message): return .media(message)
            case .streamEnded(let reason): return .ended(reason: reason)
            default: continue
            }
        }
        if let ended { return .ended(reason: ended) }
        return nil
    }

    private enum Milestone {
        case handshakeDone
        case streamStarted
    }

    /// Reads and processes until `milestone` is reached, failing with the right timeout when `timeout` passes first.
    private func pump(until milestone: Milestone, timeout: Duration) async throws(RTMPError) {
        let deadline = ContinuousClock.now + timeout
        func reached() -> Bool {
            switch milestone {
            case .handshakeDone: machine.phase != .handshaking
            case .streamStarted: startStatus != nil
            }
        }
        func timedOut() -> RTMPError {
            switch machine.phase {
            case .handshaking: .handshakeTimedOut(after: timeout, received: Int(bytesReceived))
            case .connecting: .responseTimeout("connect", after: timeout)
            case .creatingStream: .responseTimeout("createStream", after: timeout)
            default: .responseTimeout(role == .play ? "play" : "publish", after: timeout)
            }
        }
        while !reached() {
            if let failure { throw failure }
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { throw timedOut() }
            do {
                try await receiveOnce(timeout: remaining)
            } catch  where error.kind == .idleTimeout {
                throw timedOut()
            }
        }
        if let failure { throw failure }
    }

    /// One read from the socket, fed to the state machine.
    private func receiveOnce(timeout: Duration?) async throws(RTMPError) {
        var buffer = inbox
        inbox = ByteBuffer()
        let count: Int
        do {
            count = try await socket.read(appendingTo: &buffer, maxLength: configuration.readSize, timeout: timeout)
        } catch  where error.kind == .connectionLost {
            inbox = buffer
            let lost = closedError(lost: error)
            failure = lost
            throw lost
        } catch {
            inbox = buffer
            throw error
        }
        try await feed(&buffer, count: count)
    }

    /// Feeds `count` new bytes at the end of `buffer` to the state machine; 0 means the server closed.
    private func feed(_ buffer: inout ByteBuffer, count: Int) async throws(RTMPError) {
        defer { inbox = buffer }
        guard count > 0 else {
            let error = closedError()
            failure = error
            throw error
        }
        bytesReceived += Int64(count)
        try await perform(machine.receive(&buffer, newBytes: count))
    }

    /// Processes whatever the server has sent without waiting (acknowledgements, pings, errors while publishing).
    private func drainIncoming() async throws(RTMPError) {
        if let failure { throw failure }
        while true {
            var buffer = inbox
            inbox = ByteBuffer()
            let count: Int?
            do {
                count = try await socket.readAvailable(appendingTo: &buffer, maxLength: configuration.readSize)
            } catch {
                inbox = buffer
                throw error
            }
            guard let count else {
                inbox = buffer
                return
            }
            try await feed(&buffer, count: count)
        }
    }

    /// The server closed (or reset, when `lost` is given) the connection: say when, as that says why.
    private func closedError(lost: RTMPError? = nil) -> RTMPError {
        let what = lost == nil ? "the server closed the connection" : "the connection failed (\(lost!.detail))"
        let context =
            switch machine.phase {
            case .handshaking: "\(what) during the handshake"
            // nginx-rtmp closes (never resets) the connection for an unknown application.
            case .connecting where lost == nil:
                "\(what) while connecting to application '\(url.application)' "
                    + "(nginx-rtmp does this for an unknown application)"
            case .connecting: "\(what) while connecting to application '\(url.application)'"
            case .creatingStream, .startingStream: "\(what) before starting stream '\(url.streamName)'"
            default: "\(what): \(url)"
            }
        return lost == nil ? .connectionClosed(context) : RTMPError(.connectionLost, context)
    }

    private func perform(_ actions: [RTMPClientStateMachine.Action], flushAt threshold: Int = 0) async throws(RTMPError)
    {
        for action in actions {
            switch action {
            case .send(let bytes):
                outbound.writeBuffer(bytes)
            case .handshakeCompleted(let result):
                handshakeResult = result
            case .connected(let status):
                connectStatus = status
            case .streamStarted(_, let status):
                startStatus = status
            case .streamEnded(let reason):
                ended = ended ?? reason
                pending.append(action)
            case .media:
                pending.append(action)
            case .status(let status):
                logger.debug("status \(status.code): \(status.description)")
            case .failed(let error):
                failure = failure ?? error
            }
        }
        if outbound.readableBytes > threshold || (threshold > 0 && outbound.readableBytes == threshold) {
            try await writeOutbound()
        }
        if let failure { throw failure }
    }

    private func writeOutbound() async throws(RTMPError) {
        guard outbound.readableBytes > 0 else { return }
        var bytes = outbound
        outbound = ByteBuffer()
        bytesSent += Int64(bytes.readableBytes)
        writes += 1
        try await socket.write(bytes)
        // Reuse the storage for the next batch.
        bytes.moveReaderIndex(forwardBy: bytes.readableBytes)
        bytes.discardReadBytes()
        if outbound.readableBytes == 0 { outbound = bytes }
    }
}

extension RTMPConnection.Configuration {
    /// For recording: a read waits 100 ms after the previous wake-up before it watches the socket
    /// again, so a live stream's messages are read in batches rather than one wake-up each. That
    /// halves the recorder's CPU time; the file is the same (nginx-rtmp queues far more than 100 ms
    /// for a player before it drops anything).
    public static let recording: RTMPConnection.Configuration = {
        var configuration = RTMPConnection.Configuration()
        configuration.socket.readCoalescing = .milliseconds(100)
        return configuration
    }()
}

/// Milliseconds of a monotonic clock, for the handshake's time field.
enum ProcessClock {
    private static let origin = ContinuousClock.now

    static func milliseconds() -> Int64 {
        let elapsed = ContinuousClock.now - origin
        return elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }
}
