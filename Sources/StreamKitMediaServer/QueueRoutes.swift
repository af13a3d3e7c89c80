import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPServer

/// The queue's routes under `/api/` (docs/API.md): reading it, changing it through a
/// ``QueueControl``, and its changes as events. Reads refuse other sites' pages
/// (``CrossSiteCheck``); changes also need the access token (the router requires it of every
/// method but GET), so a page of another site can neither read nor act.
enum QueueRoutes {
    /// How many tasks `GET /api/tasks` answers when `limit=` does not say (at most ten times this).
    static let taskPageLimit = 1_000

    /// `thisMachineAdds`: only clients on this machine may add tasks and inspect sources (a server
    /// reachable from the network: the server would otherwise fetch this machine's loopback
    /// services for a remote client, as the proxy refuses to).
    static func routes(
        queue: (@Sendable (QueueTaskRequest) throws -> QueueTaskPage)?, control: QueueControl?,
        feed: QueueEventFeed?, sites: CrossSiteCheck, thisMachineAdds: Bool = false
    ) -> HTTPRouter {
        @Sendable func checkFetcher(_ request: HTTPServerRequest) throws(HTTPResponseError) {
            try QueueRoutes.checkFetcher(request, thisMachineOnly: thisMachineAdds)
        }
        var router = HTTPRouter()
        // The queue as JSON, a page at a time in queue order: `{"limit", "offset", "states", "tasks",
        // "total"}`, every field of ``QueueTaskSummary`` in `tasks`; empty without a queue.
        router.get("/api/tasks") { request in
            // The queue names what the user downloads: not for other sites' pages.
            try sites.check(request, serving: "/api/")
            let offset = try integer(request, "offset", default: 0, in: 0...Int(Int32.max))
            let limit = try integer(request, "limit", default: taskPageLimit, in: 1...taskPageLimit * 10)
            let page =
                try queue?(QueueTaskRequest(offset: offset, limit: limit)) ?? QueueTaskPage(tasks: [], states: [:])
            struct Body: Encodable {
                let limit: Int
                let offset: Int
                let states: [String: Int]
                let tasks: [QueueTaskSummary]
                let total: Int
            }
            return .json(
                try APIJSON.encode(
                    Body(limit: limit, offset: offset, states: page.states, tasks: page.tasks, total: page.total)))
        }
        if let feed {
            router.get("/api/events") { request in
                try sites.check(request, serving: "/api/")
                let events = feed.listen()
                var response = HTTPServerResponse(
                    status: .ok, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-store"],
                    body: .stream(HTTPBodyStream(events)))
                response.headers.add("X-Accel-Buffering", "no")
                return response
            }
        }
        guard let control else { return router }
        router.post("/api/tasks") { request in
            try sites.check(request, serving: "/api/")
            try checkFetcher(request)
            let addition: QueueAddition = try decode(request)
            guard let task = try await perform(control, .add(addition)).tasks.first else {
                throw HTTPResponseError(.internalServerError, message: "the queue did not say which task it added")
            }
            return .json(try APIJSON.encode(task), status: HTTPStatus(201))
        }
        router.get("/api/tasks/:id") { request in
            try sites.check(request, serving: "/api/")
            let id = try taskID(request)
            guard let task = try control.task(id) else { throw HTTPResponseError(.notFound, message: "no task \(id)") }
            return .json(try APIJSON.encode(task))
        }
        router.patch("/api/tasks/:id") { request in
            try sites.check(request, serving: "/api/")
            let id = try taskID(request)
            struct Change: Decodable { let title: String? }
            let change: Change = try decode(request)
            guard let title = change.title else {
                throw HTTPResponseError(.badRequest, message: "nothing to change: send {\"title\": \"...\"}")
            }
            guard let task = try await perform(control, .setTitle(id, title)).tasks.first else {
                throw HTTPResponseError(.notFound, message: "no task \(id)")
            }
            return .json(try APIJSON.encode(task))
        }
        router.delete("/api/tasks/:id") { request in
            try sites.check(request, serving: "/api/")
            let keep = try boolean(request, "keepFiles")
            return answer(try await perform(control, .remove(try taskID(request), keepFiles: keep)))
        }
        let moves: [(verb: String, action: @Sendable (String) -> QueueAction)] = [
            ("start", { .start($0) }), ("stop", { .stop($0) }), ("retry", { .retry($0) }),
        ]
        for move in moves {
            router.post("/api/tasks/:id/\(move.verb)") { request in
                try sites.check(request, serving: "/api/")
                return answer(try await perform(control, move.action(try taskID(request))))
            }
        }
        router.post("/api/queue/start") { request in
            try sites.check(request, serving: "/api/")
            return answer(try await perform(control, .start(nil)))
        }
        router.post("/api/queue/stop") { request in
            try sites.check(request, serving: "/api/")
            return answer(try await perform(control, .stop(nil)))
        }
        router.get("/api/queue") { request in
            try sites.check(request, serving: "/api/")
            return .json(try APIJSON.encode(try await refusing { try await control.status() }))
        }
        router.patch("/api/queue") { request in
            try sites.check(request, serving: "/api/")
            struct Change: Decodable { let maximumConcurrentDownloads: Int? }
            let change: Change = try decode(request)
            guard let count = change.maximumConcurrentDownloads else {
                throw HTTPResponseError(
                    .badRequest, message: "nothing to change: send {\"maximumConcurrentDownloads\": N}")
            }
            _ = try await perform(control, .setConcurrency(count))
            return .json(try APIJSON.encode(try await refusing { try await control.status() }))
        }
        if let inspect = control.inspect {
            router.post("/api/inspect") { request in
                try sites.check(request, serving: "/api/")
                try checkFetcher(request)
                struct Source: Decodable { let url: String }
                let source: Source = try decode(request)
                return .json(try APIJSON.encode(try await refusing { try await inspect(source.url) }))
            }
        }
        return router
    }

    /// Refuses a client on another machine when only this one may make the server fetch.
    static func checkFetcher(_ request: HTTPServerRequest, thisMachineOnly: Bool) throws(HTTPResponseError) {
        if thisMachineOnly && !ProxyRequestPolicy.isLoopback(request.remoteAddress) {
            throw HTTPResponseError(.forbidden, message: "adding and inspecting sources is for clients on this machine")
        }
    }

    private static func answer(_ result: QueueActionResult) -> HTTPServerResponse {
        struct Body: Encodable {
            let removed: [String]
            let tasks: [QueueTaskSummary]
        }
        return .json((try? APIJSON.encode(Body(removed: result.removed, tasks: result.tasks))) ?? Array("{}".utf8))
    }

    private static func perform(_ control: QueueControl, _ action: QueueAction) async throws -> QueueActionResult {
        try await refusing { try await control.perform(action) }
    }

    /// `body`'s value, a ``QueueControlError`` turned into the answer it names.
    private static func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as QueueControlError {
            throw HTTPResponseError(error.status, message: error.message)
        }
    }

    private static func taskID(_ request: HTTPServerRequest) throws(HTTPResponseError) -> String {
        let id = request.rawRouteParameter("id").flatMap { $0.removingPercentEncoding } ?? ""
        guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw HTTPResponseError(.notFound, message: "no task \(id.prefix(64))")
        }
        return id
    }

    /// The request's JSON body as `T`; 400 naming what is wrong otherwise.
    static func decode<T: Decodable>(_ request: HTTPServerRequest) throws(HTTPResponseError) -> T {
        if let type = request.headers["Content-Type"]?.lowercased(), !type.hasPrefix("application/json") {
            throw HTTPResponseError(HTTPStatus(415), message: "send the body as application/json, not \(type)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(request.body))
        } catch let DecodingError.keyNotFound(key, _) {
            throw HTTPResponseError(.badRequest, message: "the body has no \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw HTTPResponseError(.badRequest, message: "\"\(field)\" has the wrong type")
        } catch {
            throw HTTPResponseError(.badRequest, message: "the body is not the JSON object this route takes")
        }
    }

    /// The query parameter `name` as an integer in `range`, or `fallback` when absent.
    static func integer(
        _ request: HTTPServerRequest, _ name: String, default fallback: Int, in range: ClosedRange<Int>
    ) throws(HTTPResponseError) -> Int {
        guard let text = request.queryValue(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw HTTPResponseError(
                .badRequest, message: "\(name)= is a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// The query parameter `name` as `true` or `false` (false when absent).
    static func boolean(_ request: HTTPServerRequest, _ name: String) throws(HTTPResponseError) -> Bool {
        switch request.queryValue(name) {
        case nil, "false", "0": return false
        case "true", "1", "": return true
        case let other?: throw HTTPResponseError(.badRequest, message: "\(name)= is true or false, not \(other)")
        }
    }
}
