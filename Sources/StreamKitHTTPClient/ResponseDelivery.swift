/// The caller's side of a request in flight, as every transport holds it: a continuation waiting
/// for the head, then the channel the body is read from. One place turns the transfer state
/// machine's ``HTTPClientTransferStateMachine/EndAction`` into resumptions, for every backend.
protocol ResponseDelivery: AnyObject {
    /// What the waiting caller is resumed with.
    associatedtype Head: Sendable

    var channel: ResponseBodyChannel { get }
    /// The caller waiting for the head; taken (set to nil) when resumed.
    var headContinuation: CheckedContinuation<Head, any Error>? { get set }

    /// The caller's value for a response.
    static func head(_ response: HTTPClientResponse) -> Head
}

extension ResponseDelivery {
    /// Gives the waiting caller the response, its body read from ``channel``. Nothing when no one
    /// waits: a body reader made for nobody would cancel the channel when it goes away.
    func deliverHead(_ head: HTTPClientResponseHead) {
        guard let continuation = headContinuation.take() else { return }
        let body = HTTPClientResponse.Body(reader: BodyReader(channel: channel))
        continuation.resume(returning: Self.head(HTTPClientResponse(head: head, body: body)))
    }

    /// Carries out the end of the transfer. `writeFailure`, bytes the transport could not write,
    /// ends the body when the action brings no error of its own.
    func carryOut(_ action: HTTPClientTransferStateMachine.EndAction, writeFailure: HTTPClientError? = nil) {
        switch action {
        case .none:
            break
        case .failHead(let error):
            headContinuation.take()?.resume(throwing: error)
            channel.finish(error)
        case .deliverHeadAndFinish(let head, let bodyError):
            deliverHead(head)
            channel.finish(bodyError ?? writeFailure)
        case .finishBody(let error):
            channel.finish(error ?? writeFailure)
        }
    }
}
