import StreamKitCore

#if canImport(Glibc)
import CStreamKitLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One readiness event from the poller.
struct ServerPollEvent: Sendable {
    /// What was registered: a connection id, ``ServerPoller/listenerToken`` or ``ServerPoller/wakeToken``.
    var token: UInt64
    var readable: Bool
    var writable: Bool
    /// The peer shut down its sending side (or the connection failed): reading will end.
    var hangUp: Bool
    /// The connection is gone both ways (reset, or an error): nothing more can be written.
    var failed: Bool
}

/// Readiness notification for one event loop: epoll on Linux, kqueue on Darwin, side by side.
///
/// Connections are registered once, edge-triggered for reading and writing, and never modified:
/// the owner reads until `EAGAIN` and writes until `EAGAIN`, and remembers what it still owes.
/// The listening socket is level-triggered. ``wake()`` may be called from any thread; the other
/// methods belong to the loop's thread.
final class ServerPoller: @unchecked Sendable {
    // Safe to share: only `wake()` is called from other threads, and it touches an immutable
    // descriptor with a single system call.

    static let listenerToken = UInt64.max - 1
    static let wakeToken = UInt64.max

    private let descriptor: Int32
    #if canImport(Glibc)
    private let wakeDescriptor: Int32
    private var events: [epoll_event]
    #elseif canImport(Darwin)
    private var events: [kevent]
    #endif

    init(capacity: Int = 256) throws {
        #if canImport(Glibc)
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError.current("epoll_create1") }
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else {
            let error = SystemError.current("eventfd")
            close(descriptor)
            throw error
        }
        events = Array(repeating: epoll_event(), count: capacity)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeToken
        guard epoll_ctl(descriptor, EPOLL_CTL_ADD, wakeDescriptor, &event) == 0 else {
            let error = SystemError.current("epoll_ctl", subject: "eventfd")
            close(wakeDescriptor)
            close(descriptor)
            throw error
        }
        #elseif canImport(Darwin)
        descriptor = kqueue()
        guard descriptor >= 0 else { throw SystemError.current("kqueue") }
        events = Array(repeating: kevent(), count: capacity)
        var change = kevent(
            ident: 0, filter: Int16(EVFILT_USER), flags: UInt16(EV_ADD | EV_CLEAR), fflags: 0, data: 0,
            udata: Self.udata(Self.wakeToken))
        guard kevent(descriptor, &change, 1, nil, 0, nil) == 0 else {
            let error = SystemError.current("kevent", subject: "EVFILT_USER")
            close(descriptor)
            throw error
        }
        #endif
    }

    deinit {
        #if canImport(Glibc)
        close(wakeDescriptor)
        #endif
        close(descriptor)
    }

    /// Watches a connection for reading, writing and hang-up, edge-triggered.
    func addConnection(_ socket: Int32, token: UInt64) throws {
        #if canImport(Glibc)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = token
        guard epoll_ctl(descriptor, EPOLL_CTL_ADD, socket, &event) == 0 else {
            throw SystemError.current("epoll_ctl", subject: "connection \(token)")
        }
        #elseif canImport(Darwin)
        var changes = [
            kevent(
                ident: UInt(socket), filter: Int16(EVFILT_READ), flags: UInt16(EV_ADD | EV_CLEAR), fflags: 0, data: 0,
                udata: Self.udata(token)),
            kevent(
                ident: UInt(socket), filter: Int16(EVFILT_WRITE), flags: UInt16(EV_ADD | EV_CLEAR), fflags: 0, data: 0,
                udata: Self.udata(token)),
        ]
        guard kevent(descriptor, &changes, 2, nil, 0, nil) == 0 else {
            throw SystemError.current("kevent", subject: "connection \(token)")
        }
        #endif
    }

    /// Watches the listening socket for incoming connections, level-triggered.
    func addListener(_ socket: Int32) throws {
        #if canImport(Glibc)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.listenerToken
        guard epoll_ctl(descriptor, EPOLL_CTL_ADD, socket, &event) == 0 else {
            throw SystemError.current("epoll_ctl", subject: "listener")
        }
        #elseif canImport(Darwin)
        var change = kevent(
            ident: UInt(socket), filter: Int16(EVFILT_READ), flags: UInt16(EV_ADD), fflags: 0, data: 0,
            udata: Self.udata(Self.listenerToken))
        guard kevent(descriptor, &change, 1, nil, 0, nil) == 0 else {
            throw SystemError.current("kevent", subject: "listener")
        }
        #endif
    }

    /// Stops watching the listening socket (before it is closed).
    func removeListener(_ socket: Int32) {
        #if canImport(Glibc)
        var event = epoll_event()
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, socket, &event)
        #elseif canImport(Darwin)
        var change = kevent(
            ident: UInt(socket), filter: Int16(EVFILT_READ), flags: UInt16(EV_DELETE), fflags: 0, data: 0, udata: nil)
        _ = kevent(descriptor, &change, 1, nil, 0, nil)
        #endif
    }

    /// Makes a waiting ``wait(timeoutMilliseconds:_:)`` return. Any thread.
    func wake() {
        #if canImport(Glibc)
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
        #elseif canImport(Darwin)
        var change = kevent(
            ident: 0, filter: Int16(EVFILT_USER), flags: 0, fflags: UInt32(NOTE_TRIGGER), data: 0,
            udata: Self.udata(Self.wakeToken))
        _ = kevent(descriptor, &change, 1, nil, 0, nil)
        #endif
    }

    /// Clears a wake-up after it was delivered.
    func consumeWake() {
        #if canImport(Glibc)
        var value: UInt64 = 0
        _ = read(wakeDescriptor, &value, 8)
        #endif
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and calls `body` for each event.
    func wait(timeoutMilliseconds: Int32, _ body: (ServerPollEvent) -> Void) {
        #if canImport(Glibc)
        let count = events.withUnsafeMutableBufferPointer {
            epoll_wait(descriptor, $0.baseAddress, Int32($0.count), timeoutMilliseconds)
        }
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            let event = events[index]
            let flags = event.events
            body(
                ServerPollEvent(
                    token: event.data.u64,
                    readable: flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue)
                        != 0,
                    writable: flags & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0,
                    hangUp: flags & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0,
                    failed: flags & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0))
        }
        #elseif canImport(Darwin)
        var timeout = timespec(
            tv_sec: Int(timeoutMilliseconds / 1000), tv_nsec: Int(timeoutMilliseconds % 1000) * 1_000_000)
        let count = events.withUnsafeMutableBufferPointer { buffer in
            if timeoutMilliseconds < 0 {
                return kevent(descriptor, nil, 0, buffer.baseAddress, Int32(buffer.count), nil)
            }
            return withUnsafePointer(to: &timeout) {
                kevent(descriptor, nil, 0, buffer.baseAddress, Int32(buffer.count), $0)
            }
        }
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            let event = events[index]
            let token = UInt64(UInt(bitPattern: event.udata))
            let ended = event.flags & UInt16(EV_EOF | EV_ERROR) != 0
            // With EV_EOF, `fflags` holds the socket error: set for a reset, zero for a plain FIN.
            let failed = event.flags & UInt16(EV_ERROR) != 0 || (ended && event.fflags != 0)
            body(
                ServerPollEvent(
                    token: token, readable: event.filter == Int16(EVFILT_READ) || event.filter == Int16(EVFILT_USER),
                    writable: event.filter == Int16(EVFILT_WRITE), hangUp: ended, failed: failed))
        }
        #endif
    }

    #if canImport(Darwin)
    private static func udata(_ token: UInt64) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: UInt(token))
    }
    #endif
}
