import Foundation
import StreamKitCore
import StreamKitHTTP
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession backend of ``HTTPClient``: the Apple platforms' transport, behind the same API
/// as the libcurl one (same transfer and body state machines, same errors).
///
/// One session per client with a streaming data delegate on a serial queue. Backpressure and
/// rate limits suspend the task (URLSession cannot refuse bytes it has delivered, so the buffer
/// may pass its limit by one delivery). Not covered, unlike libcurl: a separate connect timeout
/// (the idle timeout covers it), a per-request total timeout (the client's is session-wide),
/// connection counts in the statistics. On Linux it runs on FoundationNetworking, which
/// PLATFORM.md measured five times slower than libcurl and which keeps delivering data to a
/// suspended task (so there the body buffer is not bounded); tests there check that it works.
///
/// `@unchecked Sendable`: the transfers' state is touched only on `queue` (the delegate queue,
/// serial); the rest is immutable after `init` or locked.
final class URLSessionBackend: NSObject, HTTPClientBackend, TransferController, URLSessionDataDelegate,
    @unchecked Sendable
{
    private let configuration: HTTPClientConfiguration
    private let queue: OperationQueue
    private let lockedSession = Mutex<URLSession?>(nil)
    private let statisticsState = Mutex(HTTPClientStatistics())
    private let globalBucket: Mutex<TokenBucket?>
    private let stopped = Atomic<Bool>(false)
    // Delegate queue only.
    private var transfers: [Int: URLSessionTransfer] = [:]
    private var transfersByTask: [Int: URLSessionTransfer] = [:]

    init(configuration: HTTPClientConfiguration) {
        self.configuration = configuration
        queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "streamkit.http.urlsession"
        globalBucket = Mutex(configuration.globalReceiveRate.map { TokenBucket(rate: $0, now: .now) })
        super.init()
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maximumConnectionsPerHost)
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        if let total = configuration.timeouts.total {
            sessionConfiguration.timeoutIntervalForResource = total.secondsValue
        }
        switch configuration.proxy {
        case .environment:
            break
        case .none:
            sessionConfiguration.connectionProxyDictionary = [:]
        case .url(let proxy, _):
            if let components = URLComponents(string: proxy), let host = components.host {
                let port = components.port ?? 8080
                sessionConfiguration.connectionProxyDictionary = [
                    "HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port, "HTTPSEnable": 1, "HTTPSProxy": host,
                    "HTTPSPort": port,
                ]
            }
        }
        let session = URLSession(configuration: sessionConfiguration, delegate: self, delegateQueue: queue)
        lockedSession.withLock { $0 = session }
    }

    var statistics: HTTPClientStatistics {
        var statistics = statisticsState.withLock { $0 }
        statistics.liveTransferObjects = URLSessionTransfer.live(for: self)
        return statistics
    }

    // MARK: HTTPClientBackend

    func execute(_ request: HTTPClientRequest, id: Int, bodyBufferLimit: Int) async throws -> HTTPClientResponse {
        let urlRequest = try makeURLRequest(request)
        let timeouts = request.timeouts ?? configuration.timeouts
        let transfer = URLSessionTransfer(
            id: id, backend: self,
            machine: HTTPClientTransferStateMachine(
                expectation: .init(
                    url: request.url, range: request.range, ifRange: request.ifRange,
                    expectsBody: request.expectsBody, idleTimeout: timeouts.idle),
                now: .now),
            channel: ResponseBodyChannel(highWater: bodyBufferLimit, transferID: id, controller: self),
            redirectLimit: max(0, request.redirectLimit ?? configuration.redirectLimit),
            bucket: request.maximumReceiveRate.flatMap { $0 > 0 ? TokenBucket(rate: $0, now: .now) : nil })
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<HTTPClientResponse, any Error>) in
                queue.addOperation { [self] in
                    transfer.headContinuation = continuation
                    guard !stopped.load(ordering: .acquiring), let session = lockedSession.withLock({ $0 }) else {
                        end(
                            transfer,
                            transfer.machine.cancel(HTTPClientError(.cancelled, detail: "the HTTP client shut down")))
                        return
                    }
                    if transfer.cancelRequested {
                        end(transfer, transfer.machine.cancel(.cancelled))
                        return
                    }
                    let task = session.dataTask(with: urlRequest)
                    transfer.task = task
                    transfers[id] = transfer
                    transfersByTask[task.taskIdentifier] = transfer
                    statisticsState.withLock {
                        $0.transfersStarted += 1
                        $0.activeTransfers += 1
                    }
                    task.resume()
                }
            }
        } onCancel: {
            queue.addOperation { [self] in
                transfer.cancelRequested = true
                if transfers[id] != nil { cancel(transfer, .cancelled) }
            }
        }
    }

    func shutdown() async {
        requestShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.addOperation { continuation.resume() }
        }
    }

    func requestShutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.addOperation { [self] in
            for transfer in Array(transfers.values) {
                cancel(transfer, HTTPClientError(.cancelled, detail: "the HTTP client shut down"))
            }
            // Breaks the session's strong reference to its delegate.
            lockedSession.withLock { session in
                session?.invalidateAndCancel()
                session = nil
            }
        }
    }

    // MARK: TransferController

    func resumeTransfer(_ id: Int) {
        queue.addOperation { [self] in
            guard let transfer = transfers[id] else { return }
            transfer.bodyPaused = false
            resumeIfUnpaused(transfer)
        }
    }

    func cancelTransfer(_ id: Int, error: HTTPClientError) {
        queue.addOperation { [self] in
            guard let transfer = transfers[id] else { return }
            cancel(transfer, error)
        }
    }

    // MARK: URLSessionDataDelegate (on `queue`)

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let transfer = transfersByTask[task.taskIdentifier] else { return completionHandler(nil) }
        guard transfer.redirectLimit > 0 else { return completionHandler(nil) }  // the 3xx is the response
        transfer.redirects += 1
        // The Location as sent: FoundationNetworking rewrites some targets (file:///x into http://host/x).
        let location =
            (response.allHeaderFields["Location"] as? String) ?? (response.allHeaderFields["location"] as? String)
        let target = request.url?.absoluteString ?? ""
        var refusal: HTTPClientError?
        if let location, let scheme = URLComponents(string: location)?.scheme,
            !["http", "https"].contains(scheme.lowercased())
        {
            refusal = HTTPClientError(
                .unsupportedScheme, url: location,
                detail: "redirect from \(transfer.url) refused: only http and https are followed")
        } else if !HTTPClientRequest(url: target).isHTTPScheme {
            refusal = HTTPClientError(
                .unsupportedScheme, url: target,
                detail: "redirect from \(transfer.url) refused: only http and https are followed")
        } else if transfer.redirects > transfer.redirectLimit {
            refusal = HTTPClientError(
                .tooManyRedirects, url: target, detail: "more than \(transfer.redirectLimit) redirects")
        }
        guard let refusal else { return completionHandler(request) }
        // Answer the session first: cancelling before it would leave it waiting (and trap on Linux).
        let action = transfer.machine.cancel(refusal)
        completionHandler(nil)
        end(transfer, action)
        task.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfersByTask[dataTask.taskIdentifier], let http = response as? HTTPURLResponse else {
            return completionHandler(.cancel)
        }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            headers.add("\(name)", "\(value)")
        }
        let head = HTTPClientResponseHeadParser.Head(
            version: "1.1", status: HTTPStatus(http.statusCode), reasonPhrase: "", headers: headers)
        let url = http.url?.absoluteString ?? transfer.url
        switch transfer.machine.responseHead(head, redirects: transfer.redirects, now: .now, url: url) {
        case .none:
            completionHandler(.allow)
        case .deliverHead(let head):
            transfer.deliverHead(head)
            completionHandler(.allow)
        case .abort(let error):
            cancel(transfer, error)
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfersByTask[dataTask.taskIdentifier] else { return }
        let now = ContinuousClock.now
        switch transfer.machine.bodyWillArrive(now: now, url: { transfer.url }) {
        case .abort(let error):
            cancel(transfer, error)
            return
        case .deliverHeadThenAccept(let head):
            transfer.deliverHead(head)
        case .accept:
            break
        }
        let action = data.withUnsafeBytes { transfer.channel.receiveUnconditionally($0) }
        if action == .abort {
            cancel(transfer, .cancelled)
            return
        }
        transfer.machine.bodyAccepted(data.count, now: now)
        transfer.channel.flush(now: .now)
        if action == .pause {
            transfer.bodyPaused = true
            statisticsState.withLock { $0.bodyPauses += 1 }
        }
        // Rate limits: take the tokens; when in debt, hold the task until they return.
        globalBucket.withLock { $0?.take(data.count, now: now) }
        transfer.bucket?.take(data.count, now: now)
        let wait = max(
            globalBucket.withLock { $0?.delayUntilAvailable(now: now) } ?? .zero,
            transfer.bucket?.delayUntilAvailable(now: now) ?? .zero)
        if wait > .zero {
            transfer.ratePaused = true
            let id = transfer.id
            DispatchQueue.global().asyncAfter(deadline: .now() + wait.secondsValue) { [self] in
                queue.addOperation { [self] in
                    guard let transfer = transfers[id] else { return }
                    transfer.ratePaused = false
                    resumeIfUnpaused(transfer)
                }
            }
        }
        if transfer.bodyPaused || transfer.ratePaused {
            transfer.machine.paused(now: now)
            dataTask.suspend()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfersByTask[task.taskIdentifier] else { return }
        let failure = error.map { Self.map($0, url: transfer.url) }
        end(transfer, transfer.machine.completed(failure: failure, url: { transfer.url }))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Darwin)
        if configuration.tlsVerification == .insecureSkipVerification,
            let trust = challenge.protectionSpace.serverTrust
        {
            return completionHandler(.useCredential, URLCredential(trust: trust))
        }
        #endif
        completionHandler(.performDefaultHandling, nil)
    }

    // MARK: Private (on `queue`)

    private func makeURLRequest(_ request: HTTPClientRequest) throws -> URLRequest {
        guard let url = URL(string: request.url) else {
            throw HTTPClientError(.invalidRequest, url: request.url, detail: "not a valid URL")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        let timeouts = request.timeouts ?? configuration.timeouts
        // URLSession's per-request timeout is the longest wait for more data: the idle timeout.
        urlRequest.timeoutInterval = (timeouts.idle ?? .seconds(86_400 * 7)).secondsValue
        urlRequest.httpShouldHandleCookies = false
        for field in try request.headerFieldsToSend() {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.setValue(request.userAgent ?? configuration.userAgent, forHTTPHeaderField: "User-Agent")
        if let cookies = request.cookieHeaderValue { urlRequest.setValue(cookies, forHTTPHeaderField: "Cookie") }
        if request.range != nil || !request.decodesContent {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        return urlRequest
    }

    private func cancel(_ transfer: URLSessionTransfer, _ error: HTTPClientError) {
        end(transfer, transfer.machine.cancel(error))
        transfer.task?.cancel()
    }

    private func end(_ transfer: URLSessionTransfer, _ action: HTTPClientTransferStateMachine.EndAction) {
        if transfers.removeValue(forKey: transfer.id) != nil {
            statisticsState.withLock {
                $0.transfersFinished += 1
                $0.activeTransfers -= 1
            }
        }
        if let task = transfer.task { transfersByTask[task.taskIdentifier] = nil }
        transfer.carryOut(action)
    }

    private func resumeIfUnpaused(_ transfer: URLSessionTransfer) {
        guard !transfer.bodyPaused, !transfer.ratePaused else { return }
        transfer.machine.resumed(now: .now)
        transfer.task?.resume()
    }

    /// The error for a URLSession failure.
    static func map(_ error: any Error, url: String) -> HTTPClientError {
        guard let urlError = error as? URLError else {
            return HTTPClientError(.transportFailure, url: url, detail: "\(error)")
        }
        let kind: HTTPClientError.Kind =
            switch urlError.code {
            case .cancelled: .cancelled
            case .timedOut: .idleTimeout
            case .cannotFindHost, .dnsLookupFailed: .couldNotResolveHost
            case .cannotConnectToHost, .notConnectedToInternet: .connectFailed
            case .networkConnectionLost: .connectionReset
            case .badServerResponse, .cannotParseResponse: .malformedResponse
            case .zeroByteResource: .emptyResponse
            case .httpTooManyRedirects, .redirectToNonExistentLocation: .tooManyRedirects
            case .unsupportedURL: .unsupportedScheme
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                .tlsFailure
            case .cannotDecodeContentData, .cannotDecodeRawData: .contentDecodingFailed
            default: .transportFailure
            }
        return HTTPClientError(kind, url: url, detail: urlError.localizedDescription)
    }
}

/// One request on the URLSession edge. Touched only on the backend's delegate queue.
final class URLSessionTransfer: ResponseDelivery, @unchecked Sendable {
    let id: Int
    /// The request's URL (kept apart from the state machine, which must not be read while it runs).
    let url: String
    var task: URLSessionDataTask?
    var machine: HTTPClientTransferStateMachine
    let channel: ResponseBodyChannel
    let redirectLimit: Int
    var redirects = 0
    var bucket: TokenBucket?
    var headContinuation: CheckedContinuation<HTTPClientResponse, any Error>?
    var cancelRequested = false
    var bodyPaused = false
    var ratePaused = false
    private let owner: ObjectIdentifier

    static func head(_ response: HTTPClientResponse) -> HTTPClientResponse { response }

    private static let counts = Mutex<[ObjectIdentifier: Int]>([:])

    init(
        id: Int, backend: URLSessionBackend, machine: HTTPClientTransferStateMachine, channel: ResponseBodyChannel,
        redirectLimit: Int, bucket: TokenBucket?
    ) {
        self.id = id
        self.url = machine.expectation.url
        self.machine = machine
        self.channel = channel
        self.redirectLimit = redirectLimit
        self.bucket = bucket
        owner = ObjectIdentifier(backend)
        Self.counts.withLock { $0[owner, default: 0] += 1 }
    }

    deinit {
        Self.counts.withLock { counts in
            counts[owner, default: 0] -= 1
            if counts[owner] == 0 { counts[owner] = nil }
        }
    }

    /// Transfer objects alive for `backend`.
    static func live(for backend: URLSessionBackend) -> Int {
        counts.withLock { $0[ObjectIdentifier(backend)] ?? 0 }
    }
}

extension HTTPClientRequest {
    /// Whether the URL's scheme is http or https.
    var isHTTPScheme: Bool {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        return (scheme == "http" || scheme == "https") && url.count > scheme.count
    }
}
