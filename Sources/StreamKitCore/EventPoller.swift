#if canImport(Glibc)
import CStreamKitLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One readiness event from an ``EventPoller``.
package struct PollEvent: Sendable {
    /// What the descriptor was registered with, or ``EventPoller/wakeToken``.
    package var token: UInt64
    package var readable: Bool
    package var writable: Bool
    /// The peer shut down its sending side (or the connection failed): reading will end.
    package var hangUp: Bool
    /// The connection is gone both ways (reset, or an error): nothing more can be written.
    package var failed: Bool
}

/// The one readiness mechanism of the process's own event loops: epoll on Linux, kqueue on
/// Darwin, with a wake-up any thread may send. The HTTP server's loops and RTMP's socket reactor
/// each run their loop on one; what they watch and how they react is theirs.
///
/// ``wake()`` may be called from any thread; the other methods belong to the loop's thread
/// (``add(_:token:interest:trigger:)`` and ``remove(_:)`` too may be called from others: the
/// kernel serialises them).
package final class EventPoller: @unchecked Sendable {
    // Safe to share: the descriptors are immutable, `wake()` is one system call, and `events` is
    // touched by `wait` alone, which only the loop's thread calls.

    /// The token of the poller's own wake-up.
    package static let wakeToken = UInt64.max

    /// The directions to watch.
    package struct Interest: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Readable, or the peer hung up.
        package static let read = Interest(rawValue: 1)
        package static let write = Interest(rawValue: 2)
    }

    /// When an event is reported.
    package enum Trigger: Sendable {
        /// As long as the descriptor is ready (a listening socket).
        case level
        /// Once each time it becomes ready; the owner reads and writes until `EAGAIN`.
        case edge
        /// Once, then not again until the interest is set anew.
        case oneShot
    }

    private let descriptor: Int32
    #if canImport(Glibc)
    private let wakeDescriptor: Int32
    private var events: [epoll_event]
    #elseif canImport(Darwin)
    private var events: [kevent]
    #endif

    package init(capacity: Int = 256) throws(SystemError) {
        #if canImport(Glibc)
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else { throw .current("epoll_create1") }
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
        guard descriptor >= 0 else { throw .current("kqueue") }
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

    /// Watches `socket` for `interest`, reporting it with `token`; for a socket already watched,
    /// replaces what is watched.
    package func add(_ socket: Int32, token: UInt64, interest: Interest, trigger: Trigger) throws(SystemError) {
        try register(socket, token: token, interest: interest, trigger: trigger, isWatched: false)
    }

    /// Replaces what a watched `socket` is watched for: how a one-shot registration is armed
    /// again, in one system call.
    package func modify(_ socket: Int32, token: UInt64, interest: Interest, trigger: Trigger) throws(SystemError) {
        try register(socket, token: token, interest: interest, trigger: trigger, isWatched: true)
    }

    private func register(
        _ socket: Int32, token: UInt64, interest: Interest, trigger: Trigger, isWatched: Bool
    ) throws(SystemError) {
        #if canImport(Glibc)
        var event = epoll_event()
        if interest.contains(.read) { event.events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if interest.contains(.write) { event.events |= EPOLLOUT.rawValue }
        switch trigger {
        case .level: break
        case .edge: event.events |= EPOLLET.rawValue
        case .oneShot: event.events |= EPOLLONESHOT.rawValue
        }
        event.data.u64 = token
        if epoll_ctl(descriptor, isWatched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket, &event) == 0 { return }
        let operation = isWatched ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        guard errno == (isWatched ? ENOENT : EEXIST), epoll_ctl(descriptor, operation, socket, &event) == 0 else {
            throw .current("epoll_ctl", subject: "descriptor \(socket)")
        }
        #elseif canImport(Darwin)
        var flags = UInt16(EV_ADD)
        switch trigger {
        case .level: break
        case .edge: flags |= UInt16(EV_CLEAR)
        case .oneShot: flags |= UInt16(EV_ONESHOT)
        }
        var changes: [kevent] = []
        if interest.contains(.read) {
            changes.append(
                kevent(
                    ident: UInt(socket), filter: Int16(EVFILT_READ), flags: flags, fflags: 0, data: 0,
                    udata: Self.udata(token)))
        }
        if interest.contains(.write) {
            changes.append(
                kevent(
                    ident: UInt(socket), filter: Int16(EVFILT_WRITE), flags: flags, fflags: 0, data: 0,
                    udata: Self.udata(token)))
        }
        guard kevent(descriptor, &changes, Int32(changes.count), nil, 0, nil) == 0 else {
            throw .current("kevent", subject: "descriptor \(socket)")
        }
        #endif
    }

    /// Stops watching `socket` (before it is closed).
    package func remove(_ socket: Int32) {
        #if canImport(Glibc)
        var event = epoll_event()
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, socket, &event)
        #elseif canImport(Darwin)
        var changes = [Int16(EVFILT_READ), Int16(EVFILT_WRITE)].map {
            kevent(ident: UInt(socket), filter: $0, flags: UInt16(EV_DELETE), fflags: 0, data: 0, udata: nil)
        }
        _ = kevent(descriptor, &changes, 2, nil, 0, nil)
        #endif
    }

    /// Makes a waiting ``wait(timeoutMilliseconds:_:)`` return. Any thread.
    package func wake() {
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
    package func consumeWake() {
        #if canImport(Glibc)
        var value: UInt64 = 0
        _ = read(wakeDescriptor, &value, 8)
        #endif
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and calls `body` for each event.
    package func wait(timeoutMilliseconds: Int32, _ body: (PollEvent) -> Void) {
        #if canImport(Glibc)
        let count = events.withUnsafeMutableBufferPointer {
            epoll_wait(descriptor, $0.baseAddress, Int32($0.count), timeoutMilliseconds)
        }
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            let event = events[index]
            let flags = event.events
            body(
                PollEvent(
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
                PollEvent(
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
