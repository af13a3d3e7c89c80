import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the event loops of one server share.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let dispatcher: HTTPRequestDispatcher
    let logger: Logger
    let timeouts: HTTPServerConnectionStateMachine.Timeouts
    /// Sockets open across every loop.
    let openConnections = Atomic<Int>(0)
    /// Who holds the connections, and which idle ones a new connection displaces at a limit.
    let connectionTable: Mutex<HTTPConnectionTable>
    private let nextConnectionID = Atomic<UInt64>(1)

    init(
        configuration: HTTPServerConfiguration, maximumConnections: Int, dispatcher: HTTPRequestDispatcher,
        logger: Logger
    ) {
        self.configuration = configuration
        self.dispatcher = dispatcher
        self.logger = logger
        self.connectionTable = Mutex(
            HTTPConnectionTable(
                maximumConnections: maximumConnections,
                maximumConnectionsPerClient: configuration.maximumConnectionsPerClient))
        self.timeouts = .init(
            idle: configuration.idleTimeout, request: configuration.requestTimeout, send: configuration.sendTimeout,
            linger: .seconds(2))
    }

    func makeConnectionID() -> UInt64 { nextConnectionID.add(1, ordering: .relaxed).oldValue }
}

/// One event-loop thread: a poller, the connections it owns, and an inbox other threads post to.
///
/// Connections are confined to their loop's thread. Tasks running route handlers and stream
/// producers talk to a connection only by posting a ``Message`` naming its id, so a message for a
/// connection that has closed meanwhile is simply dropped (or fails the waiting writer).
final class ServerEventLoop: @unchecked Sendable {
    // Safe to share: `inbox`, `wakeRequested`, `connectionCount` and `poller.wake()` are
    // thread-safe; every other property is touched only on the loop's own thread, or before that
    // thread starts (`peers`, `listener`).

    enum Message: Sendable {
        case adopt(Int32, remoteAddress: String, id: UInt64)
        /// Close the connection if it is still idle (the table chose it to admit a new one).
        case evict(connection: UInt64)
        case response(connection: UInt64, serial: UInt64, HTTPServerResponse)
        case streamChunk(connection: UInt64, serial: UInt64, HTTPBodyPart, CheckedContinuation<Void, any Error>)
        case streamEnd(connection: UInt64, serial: UInt64, failed: Bool)
        case shutdown(deadline: ContinuousClock.Instant)
    }

    private struct Inbox {
        var messages: [Message] = []
        var closed = false
    }

    let index: Int
    let context: ServerContext
    let poller: EventPoller
    /// The token the listening socket is watched with (connections have their ids).
    static let listenerToken = UInt64.max - 1
    /// Connections this loop owns, read by the acceptor to balance.
    let connectionCount = Atomic<Int>(0)
    private let inbox = Mutex(Inbox())
    private let wakeRequested = Atomic<Bool>(false)
    private let onStop: @Sendable () -> Void

    // Loop-confined.
    var peers: [ServerEventLoop] = []
    var listener: Int32 = -1
    private var connections: [UInt64: HTTPServerConnection] = [:]
    private var shutdownDeadline: ContinuousClock.Instant?
    /// When accepting stopped for lack of descriptors, when to try again.
    private var acceptResumesAt: ContinuousClock.Instant?
    private let clock = ContinuousClock()
    private(set) var now: ContinuousClock.Instant
    let readBuffer: UnsafeMutableRawBufferPointer
    private var dateSecond = -1
    private(set) var dateText = ""

    init(index: Int, context: ServerContext, onStop: @escaping @Sendable () -> Void) throws {
        self.index = index
        self.context = context
        self.onStop = onStop
        self.poller = try EventPoller()
        self.readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        self.now = clock.now
    }

    deinit { readBuffer.deallocate() }

    /// Starts the loop's thread.
    func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "streamkit-http-\(index)"
        thread.start()
    }

    /// Hands a message to the loop. Any thread. After the loop has stopped, waiting writers
    /// fail at once and adopted sockets are closed.
    func post(_ message: Message) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.messages.append(message)
            return true
        }
        guard accepted else {
            discard(message)
            return
        }
        if !wakeRequested.exchange(true, ordering: .acquiringAndReleasing) { poller.wake() }
    }

    // MARK: The loop

    private func run() {
        let tick = tickInterval()
        var nextTick = clock.now + tick
        while true {
            now = clock.now
            if let deadline = shutdownDeadline {
                if connections.isEmpty { break }
                if now >= deadline {
                    for connection in Array(connections.values) { connection.close() }
                    break
                }
            }
            let wait = max(Duration.zero, min(nextTick - now, .seconds(1)))
            let milliseconds = Int32(
                wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
            var woken = false
            poller.wait(timeoutMilliseconds: max(milliseconds, 1)) { event in
                now = clock.now
                switch event.token {
                case EventPoller.wakeToken:
                    woken = true
                case Self.listenerToken:
                    acceptConnections()
                default:
                    guard let connection = connections[event.token] else { return }
                    if event.writable { connection.writable() }
                    if event.readable { connection.readable(hangUp: event.hangUp) }
                    // A reset connection may still look half-open to the state machine (its FIN
                    // read earlier as a half-close): nothing can reach the client any more.
                    if event.failed { connection.close() }
                }
            }
            if woken {
                poller.consumeWake()
                wakeRequested.store(false, ordering: .sequentiallyConsistent)
                drainInbox()
            }
            now = clock.now
            if let resume = acceptResumesAt, now >= resume {
                acceptResumesAt = nil
                if listener >= 0 {
                    try? poller.add(listener, token: Self.listenerToken, interest: .read, trigger: .level)
                }
            }
            if now >= nextTick {
                for connection in Array(connections.values) { connection.tick() }
                nextTick = now + tick
            }
        }
        stop()
    }

    private func stop() {
        if listener >= 0 {
            poller.remove(listener)
            close(listener)
            listener = -1
        }
        let leftover = inbox.withLock { inbox -> [Message] in
            inbox.closed = true
            defer { inbox.messages = [] }
            return inbox.messages
        }
        leftover.forEach(discard)
        onStop()
    }

    private func tickInterval() -> Duration {
        let shortest = [
            context.timeouts.idle, context.timeouts.request, context.timeouts.send, context.timeouts.linger,
        ]
        .min()!
        return min(max(shortest / 4, .milliseconds(5)), .milliseconds(250))
    }

    private func drainInbox() {
        let messages = inbox.withLock { inbox -> [Message] in
            defer { inbox.messages.removeAll(keepingCapacity: true) }
            return inbox.messages
        }
        for message in messages {
            now = clock.now
            switch message {
            case .adopt(let socket, let remoteAddress, let id):
                adopt(socket, remoteAddress: remoteAddress, id: id)
            case .evict(let id):
                evict(id)
            case .response(let id, let serial, let response):
                connections[id]?.responseReady(serial: serial, response)
            case .streamChunk(let id, let serial, let part, let continuation):
                if let connection = connections[id] {
                    connection.streamChunk(serial: serial, part, continuation: continuation)
                } else {
                    continuation.resume(throwing: HTTPServerError.connectionClosed)
                }
            case .streamEnd(let id, let serial, let failed):
                connections[id]?.streamEnded(serial: serial, failed: failed)
            case .shutdown(let deadline):
                beginShutdown(deadline: deadline)
            }
        }
    }

    /// Handles a message the stopped loop will never run: closes a handed-over socket (and
    /// forgets it in the counts), fails a waiting writer.
    private func discard(_ message: Message) {
        switch message {
        case .adopt(let socket, _, let id):
            close(socket)
            forget(id)
        case .streamChunk(_, _, _, let continuation):
            continuation.resume(throwing: HTTPServerError.connectionClosed)
        case .response, .streamEnd, .shutdown, .evict:
            break
        }
    }

    private func beginShutdown(deadline: ContinuousClock.Instant) {
        if let current = shutdownDeadline {
            // A second, more urgent stop only moves the deadline.
            shutdownDeadline = min(current, deadline)
            return
        }
        shutdownDeadline = deadline
        if listener >= 0 {
            poller.remove(listener)
            close(listener)
            listener = -1
        }
        for connection in Array(connections.values) { connection.shutdown() }
    }

    // MARK: Connections

    /// Accepts what is pending (a bounded batch, so one loop's clients cannot starve the rest),
    /// closes the idle connections the table gives up for each, and gives each connection to the
    /// loop with the fewest.
    private func acceptConnections() {
        for _ in 0..<64 {
            guard let accepted = ServerSocket.accept(listener) else {
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    // The pending connection stays readable: without a pause the loop would spin.
                    // Stop watching the listener for a moment; connections closing free descriptors.
                    let reason = SystemError.current("accept").reason
                    let open = context.openConnections.load(ordering: .relaxed)
                    context.logger.error("accept: \(reason) with \(open) connections open; pausing accepts")
                    poller.remove(listener)
                    acceptResumesAt = now + .milliseconds(100)
                }
                return
            }
            let target =
                peers.min { $0.connectionCount.load(ordering: .relaxed) < $1.connectionCount.load(ordering: .relaxed) }
                ?? self
            let id = context.makeConnectionID()
            let now = now
            let admission = context.connectionTable.withLock {
                $0.admit(id, client: accepted.client, loop: target.index, now: now)
            }
            guard case .admit(let evictions) = admission else {
                context.logger.debug("refusing a connection from \(accepted.remoteAddress): every slot is busy")
                Self.refuseOverLimit(accepted.socket)
                continue
            }
            for eviction in evictions {
                let owner = peers.first { $0.index == eviction.loop } ?? self
                if owner === self {
                    evict(eviction.connection)
                } else {
                    owner.post(.evict(connection: eviction.connection))
                }
            }
            context.openConnections.add(1, ordering: .relaxed)
            target.connectionCount.add(1, ordering: .relaxed)
            if target === self {
                adopt(accepted.socket, remoteAddress: accepted.remoteAddress, id: id)
            } else {
                target.post(.adopt(accepted.socket, remoteAddress: accepted.remoteAddress, id: id))
            }
        }
    }

    /// Closes connection `id` if it is idle; a connection that became busy since it was chosen stays.
    private func evict(_ id: UInt64) {
        guard let connection = connections[id] else { return }
        // A request may have arrived unread: read it first, so that it is answered, not cut.
        connection.readable(hangUp: false)
        if connection.isClosed { return }
        if connection.isIdle {
            context.logger.debug("closing the idle connection from \(connection.remoteAddress) for a new one")
            connection.close()
        } else {
            context.connectionTable.withLock { $0.evictionDeclined(id) }
        }
    }

    private static let overLimitResponse = Array(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 24\r\nConnection: close\r\n\r\n503 Service Unavailable\n"
            .utf8)

    private static func refuseOverLimit(_ socket: Int32) {
        _ = overLimitResponse.withUnsafeBytes { ServerSocket.send(socket, $0, more: false) }
        close(socket)
    }

    private func adopt(_ socket: Int32, remoteAddress: String, id: UInt64) {
        guard shutdownDeadline == nil else {
            close(socket)
            forget(id)
            return
        }
        if let size = context.configuration.socketSendBufferSize {
            var value = Int32(clamping: size)
            setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        let connection = HTTPServerConnection(id: id, socket: socket, remoteAddress: remoteAddress, loop: self)
        do {
            try poller.add(socket, token: id, interest: [.read, .write], trigger: .edge)
        } catch {
            context.logger.error("cannot watch connection from \(remoteAddress): \(error)")
            close(socket)
            forget(id)
            return
        }
        connections[id] = connection
    }

    /// Called by a connection once its socket is closed.
    func connectionClosed(_ id: UInt64) {
        if connections.removeValue(forKey: id) != nil { forget(id) }
    }

    /// Takes a closed connection out of the counts and the table.
    private func forget(_ id: UInt64) {
        connectionCount.subtract(1, ordering: .relaxed)
        context.openConnections.subtract(1, ordering: .relaxed)
        context.connectionTable.withLock { $0.removed(id) }
    }

    /// Connection `id` went from idle to busy (`idle` false) or back.
    func connectionIdleChanged(_ id: UInt64, idle: Bool) {
        let now = now
        context.connectionTable.withLock { table in
            if idle { table.becameIdle(id, now: now) } else { table.becameBusy(id) }
        }
    }

    /// Runs a task handler off the loop and posts its response back.
    ///
    /// - Returns: The task, which the connection cancels if it closes first.
    func runTask(
        _ handler: @escaping HTTPRouter.Handler, _ request: HTTPServerRequest, connection: UInt64, serial: UInt64
    ) -> Task<Void, Never> {
        let logger = context.logger
        return Task { [self] in
            let response = await HTTPRequestDispatcher.run(handler, request, logger: logger)
            post(.response(connection: connection, serial: serial, response))
        }
    }

    /// Runs a streaming body's producer off the loop.
    ///
    /// - Returns: The task, which the connection cancels if it closes first.
    func runProducer(_ stream: HTTPBodyStream, connection: UInt64, serial: UInt64) -> Task<Void, Never> {
        let sink = LoopBodySink(loop: self, connection: connection, serial: serial)
        let logger = context.logger
        return Task { [self] in
            var failed = false
            do {
                try await stream.produce(HTTPBodyWriter(sink: sink))
            } catch {
                failed = true
                if !(error is HTTPServerError) && !(error is CancellationError) {
                    logger.warning("streaming body failed: \(error)")
                }
            }
            post(.streamEnd(connection: connection, serial: serial, failed: failed))
        }
    }

    /// The `Date` header value for now, formatted once a second.
    func currentDate() -> String {
        let second = time(nil)
        if second != dateSecond {
            dateSecond = second
            dateText = HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(second)))
        }
        return dateText
    }
}

/// A body writer's way back to its connection: each chunk is posted to the loop, which resumes
/// the writer once the connection has room.
private struct LoopBodySink: HTTPBodySink {
    let loop: ServerEventLoop
    let connection: UInt64
    let serial: UInt64

    func write(_ part: HTTPBodyPart) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.post(.streamChunk(connection: connection, serial: serial, part, continuation))
        }
    }
}
