#if canImport(CStreamKitCurl)
import StreamKitHTTP
import CStreamKitCurl
import Foundation
import Synchronization

/// One request on the curl edge: the easy handle and what it owns (header list, error buffer),
/// the transfer state machine, and the body channel the reader drains.
///
/// `@unchecked Sendable`: the handle, the state machine and the flags are touched only by the
/// I/O thread once the transfer is handed over, and before that only by the thread creating it;
/// the hand-over goes through the loop's locked inbox, which orders the two. What the reader's
/// side touches is the channel (locked) and `cancelRequested` (atomic).
final class CurlTransfer: ResponseDelivery, @unchecked Sendable {
    let id: Int
    /// The request's URL (kept apart from the state machine, which must not be read while it runs).
    let url: String
    let loop: CurlMultiLoop
    let easy: UnsafeMutableRawPointer
    let channel: ResponseBodyChannel
    var machine: HTTPClientTransferStateMachine
    /// The caller waiting for the head; taken (set to nil) when resumed.
    var headContinuation: CheckedContinuation<HTTPClientResponse, any Error>?
    /// Set by the requesting task's cancellation handler, read by the I/O thread at start.
    let cancelRequested = Atomic<Bool>(false)
    /// The consumer's buffer is full (resumed by the reader through the loop).
    var bodyPaused = false
    /// The global rate limit is exhausted (resumed by the loop when tokens return).
    var ratePaused = false
    /// Whether body bytes arrived in this loop iteration (the reader is woken at its end).
    var touched = false
    /// This transfer's own receive-rate limit, if any.
    var bucket: TokenBucket?
    /// Direct-write bytes gathered from libcurl's callbacks (16 KB each at most) until the end of
    /// the loop iteration, then written with one `pwrite`; made at the first direct write.
    var staging: DirectWriteStaging?
    /// The configuration when it checks destinations (for the open-socket callback), else `nil`.
    let destinationCheck: HTTPClientConfiguration?
    /// The address the open-socket callback refused last, and by which rule; cleared when it
    /// opens a socket, so that it is set at the end only when the latest connect was refused.
    var refusal: (address: String, rule: String)?

    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var released = false

    /// Creates the easy handle for `request` with every option set, and a body channel that
    /// pauses the transfer while `bodyBufferLimit` bytes wait unread.
    ///
    /// - Throws: ``HTTPClientError`` for a URL that is not http or https, or options libcurl refuses.
    init(
        id: Int, request: HTTPClientRequest, configuration: HTTPClientConfiguration, bodyBufferLimit: Int,
        loop: CurlMultiLoop
    ) throws {
        guard CurlGlobal.initialized else {
            throw HTTPClientError(.transportFailure, detail: "curl_global_init failed")
        }
        guard let easy = curl_easy_init() else {
            throw HTTPClientError(.transportFailure, url: request.url, detail: "curl_easy_init failed")
        }
        self.id = id
        self.url = request.url
        self.loop = loop
        self.easy = easy
        destinationCheck = configuration.checksDestinations ? configuration : nil
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        channel = ResponseBodyChannel(
            highWater: bodyBufferLimit, transferID: id, controller: loop, supportsDirectWrite: true)
        let timeouts = request.timeouts ?? configuration.timeouts
        machine = HTTPClientTransferStateMachine(
            expectation: .init(
                url: request.url, range: request.range, ifRange: request.ifRange, expectsBody: request.expectsBody,
                idleTimeout: timeouts.idle),
            now: .now)
        if let rate = request.maximumReceiveRate, rate > 0 { bucket = TokenBucket(rate: rate, now: .now) }
        loop.liveTransfers.add(1, ordering: .relaxed)
        do {
            try configure(request: request, configuration: configuration, timeouts: timeouts)
        } catch {
            release()
            throw error
        }
    }

    deinit {
        release()
        channel.releaseDirectWrite()
        loop.liveTransfers.subtract(1, ordering: .relaxed)
    }

    static func head(_ response: HTTPClientResponse) -> HTTPClientResponse { response }

    /// Frees the easy handle and what it owns. Called by the I/O thread once the handle left the multi.
    func release() {
        guard !released else { return }
        released = true
        staging?.deallocate()
        staging = nil
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        headerList = nil
        errorBuffer.deallocate()
    }

    /// libcurl's message for the last failure.
    var errorMessage: String { String(cString: errorBuffer) }

    /// The URL of the latest response (`CURLINFO_EFFECTIVE_URL`).
    var effectiveURL: String {
        var pointer: UnsafeMutablePointer<CChar>?
        guard sk_curl_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else {
            return url
        }
        return String(cString: pointer)
    }

    /// A `long` piece of information, or 0.
    func info(_ info: CURLINFO) -> Int {
        var value = 0
        _ = sk_curl_easy_getinfo_long(easy, info, &value)
        return value
    }

    /// A `curl_off_t` piece of information, or 0.
    func offsetInfo(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = sk_curl_easy_getinfo_offset(easy, info, &value)
        return Int64(value)
    }

    /// A string piece of information, or nil.
    func stringInfo(_ info: CURLINFO) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard sk_curl_easy_getinfo_string(easy, info, &pointer) == CURLE_OK, let pointer else { return nil }
        return String(cString: pointer)
    }

    // MARK: Options

    private func configure(
        request: HTTPClientRequest, configuration: HTTPClientConfiguration, timeouts: HTTPClientTimeouts
    ) throws {
        func set(_ option: CURLoption, _ value: Int) throws {
            let code = sk_curl_easy_setopt_long(easy, option, value)
            guard code == CURLE_OK else { throw optionError(option, code) }
        }
        func set(_ option: CURLoption, _ value: String) throws {
            let code = sk_curl_easy_setopt_string(easy, option, value)
            guard code == CURLE_OK else { throw optionError(option, code) }
        }
        func set(_ option: CURLoption, offset value: Int64) throws {
            let code = sk_curl_easy_setopt_offset(easy, option, curl_off_t(value))
            guard code == CURLE_OK else { throw optionError(option, code) }
        }
        func optionError(_ option: CURLoption, _ code: CURLcode) -> HTTPClientError {
            HTTPClientError(
                .invalidRequest, url: request.url,
                detail: "libcurl refused option \(option.rawValue): \(CurlFailure.describe(code))")
        }

        let userdata = Unmanaged.passUnretained(self).toOpaque()
        try set(CURLOPT_URL, request.url)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        _ = sk_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, userdata)
        _ = sk_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
        _ = sk_curl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        _ = sk_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, userdata)
        _ = sk_curl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = sk_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, userdata)
        try set(CURLOPT_BUFFERSIZE, min(max(configuration.receiveBufferSize, 16 << 10), 512 << 10))
        if destinationCheck != nil {
            // Every connect, the redirects' included, opens its socket here with the resolved address.
            _ = sk_curl_easy_setopt_opensocket_callback(easy, curlOpenSocketCallback)
            _ = sk_curl_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, userdata)
        }

        // Method and body.
        switch request.method {
        case .get:
            try set(CURLOPT_HTTPGET, 1)
        case .head:
            try set(CURLOPT_NOBODY, 1)
        default:
            try set(CURLOPT_CUSTOMREQUEST, request.method.rawValue)
        }
        if let body = request.body {
            try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
            let code = body.withUnsafeBufferPointer {
                sk_curl_easy_setopt_pointer(
                    easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
            }
            guard code == CURLE_OK else { throw optionError(CURLOPT_COPYPOSTFIELDS, code) }
            if request.method == .get || request.method == .head {
                try set(CURLOPT_CUSTOMREQUEST, request.method.rawValue)
            }
        }

        // Redirects: only http and https at every hop (the protocol options above).
        let redirects = max(0, request.redirectLimit ?? configuration.redirectLimit)
        try set(CURLOPT_FOLLOWLOCATION, redirects > 0 ? 1 : 0)
        try set(CURLOPT_MAXREDIRS, redirects)
        // No Referer on redirects: it would carry the previous URL, signed query and all, to the next host.
        try set(CURLOPT_AUTOREFERER, 0)

        // Timeouts; the idle timeout is the loop's own (it pauses with the body).
        try set(CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, timeouts.connect.wholeMilliseconds)))
        if let total = timeouts.total { try set(CURLOPT_TIMEOUT_MS, Int(max(1, total.wholeMilliseconds))) }

        // TLS.
        let verify = configuration.tlsVerification == .verify
        try set(CURLOPT_SSL_VERIFYPEER, verify ? 1 : 0)
        try set(CURLOPT_SSL_VERIFYHOST, verify ? 2 : 0)

        // Proxy: resolved here so that an explicit "none" also overrides the environment.
        let proxy = configuration.proxy.resolve(for: request.url, environment: configuration.environment)
        try set(CURLOPT_PROXY, proxy.proxy ?? "")
        if let noProxy = proxy.noProxy { try set(CURLOPT_NOPROXY, noProxy) }

        // Content coding: ranges count identity bytes, so ranged requests ask for none.
        if request.decodesContent && request.range == nil { try set(CURLOPT_ACCEPT_ENCODING, "") }

        try set(CURLOPT_USERAGENT, request.userAgent ?? configuration.userAgent)
        if let cookies = request.cookieHeaderValue { try set(CURLOPT_COOKIE, cookies) }

        let headers = try request.headerFieldsToSend()
        var lines: [String] = []
        // No "Expect: 100-continue" round trip for small bodies ("Name:" removes a header).
        if request.body != nil && !headers.contains("Expect") { lines.append("Expect:") }
        for field in headers {
            // libcurl sends "Name;" as an empty field ("Name:" would remove it).
            lines.append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                throw HTTPClientError(.transportFailure, url: request.url, detail: "curl_slist_append failed")
            }
            headerList = appended
        }
        if let headerList { _ = sk_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList) }
    }
}

extension CurlTransfer {
    /// Opens the socket of a connect to `address`, or returns `CURL_SOCKET_BAD` (no connect is
    /// made) when the destination policy refuses it. Runs on the I/O thread.
    func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        let start = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
        let ip = IPAddress(socketAddress: UnsafeRawBufferPointer(start: start, count: Int(address.pointee.addrlen)))
        if let destinationCheck, case .refused(let rule) = destinationCheck.decideConnection(to: ip) {
            refusal = (ip.map { "\($0)" } ?? "a non-IP address", rule)
            return CURL_SOCKET_BAD
        }
        refusal = nil
        #if canImport(Glibc)
        let type = address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = address.pointee.socktype
        #endif
        return socket(address.pointee.family, type, address.pointee.protocol)
    }
}

/// `curl_global_init`, once per process.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

// libcurl's callbacks: C function pointers that find their transfer through the userdata
// pointer (unretained; the loop's table keeps the transfer alive while its handle is in use).

private let curlWriteCallback: sk_curl_data_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.loop.receiveBody(
        transfer, UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: size * count))
}

private let curlOpenSocketCallback: sk_curl_opensocket_callback = { userdata, _, address in
    guard let userdata, let address else { return CURL_SOCKET_BAD }
    return Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue().openSocket(address)
}

private let curlHeaderCallback: sk_curl_data_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.loop.receiveHeader(
        transfer, UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: size * count))
}
#endif

/// Bytes bound for one file, consecutive from `offset`, gathered in a fixed buffer. Used by the
/// I/O thread only.
struct DirectWriteStaging {
    static let capacity = 256 << 10

    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var descriptor: Int32 = -1
    private(set) var offset: Int64 = 0
    private(set) var count = 0

    init() {
        buffer = TransferBufferPool.shared.take(byteCount: Self.capacity)
    }

    /// Whether `bytes` for `descriptor` at `offset` follow the gathered ones and fit.
    func canAppend(_ bytes: UnsafeRawBufferPointer, descriptor: Int32, offset: Int64) -> Bool {
        (count == 0 || (descriptor == self.descriptor && offset == self.offset + Int64(count)))
            && count + bytes.count <= Self.capacity
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer, descriptor: Int32, offset: Int64) {
        if count == 0 {
            self.descriptor = descriptor
            self.offset = offset
        }
        UnsafeMutableRawBufferPointer(rebasing: buffer[count..<(count + bytes.count)]).copyMemory(from: bytes)
        count += bytes.count
    }

    /// Writes what was gathered; returns how many bytes that was.
    mutating func write() throws -> Int {
        guard count > 0 else { return 0 }
        let written = count
        count = 0
        try FileOutput.write(UnsafeRawBufferPointer(rebasing: buffer[0..<written]), to: descriptor, at: offset)
        return written
    }

    func deallocate() { TransferBufferPool.shared.give(buffer) }
}
