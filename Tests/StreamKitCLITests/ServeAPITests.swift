import Foundation
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `streamkit serve --run-queue` and its JSON API (docs/API.md), against nginx: a task added
/// through `POST /api/tasks` runs and finishes, seen through `/api/events` (Server-Sent Events);
/// every route that changes the queue or the cache, with what a client that gets something wrong
/// sees (a JSON error with a message, the status); refusals without the token or from another
/// site; and a Ctrl-C with an event stream open.
@Suite(.requires(.nginx)) struct ServeAPITests {
    /// The server's API as a test calls it.
    struct API {
        let base: String
        let token: String
        let client: HTTPClient

        func call(
            _ method: HTTPMethod, _ path: String, json: String? = nil, token: Bool = true,
            headers extra: [(String, String)] = []
        ) async throws -> (status: Int, body: String, type: String?) {
            var request = HTTPClientRequest(url: base + path, method: method)
            if token { request.headers.add("Authorization", "Bearer \(self.token)") }
            if let json {
                request.headers.add("Content-Type", "application/json")
                request.body = Array(json.utf8)
            }
            for (name, value) in extra { request.headers.add(name, value) }
            let (head, body) = try await client.data(for: request)
            return (Int(head.status.rawValue), String(decoding: body, as: UTF8.self), head.headers["Content-Type"])
        }

        /// The JSON object an answer holds.
        static func object(_ body: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// The events of `/api/events`, as they arrive.
    final class EventLog: Sendable {
        /// Each event's name and JSON text.
        let events = Mutex<[(name: String, data: String)]>([])
        private let reader = Mutex<Task<Void, Never>?>(nil)

        func start(_ api: API) {
            let task = Task {
                do {
                    let response = try await api.client.execute(HTTPClientRequest(url: api.base + "api/events"))
                    var pending = ""
                    for try await chunk in response.body {
                        pending += String(decoding: chunk, as: UTF8.self)
                        while let end = pending.range(of: "\n\n") {
                            let frame = pending[..<end.lowerBound]
                            pending = String(pending[end.upperBound...])
                            var name = "message"
                            var data = ""
                            for line in frame.split(separator: "\n") {
                                if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
                                if line.hasPrefix("data: ") { data += line.dropFirst(6) }
                            }
                            guard !data.isEmpty else { continue }
                            events.withLock { [name, data] in $0.append((name, data)) }
                        }
                    }
                } catch {}
            }
            reader.withLock { $0 = task }
        }

        func stop() { reader.withLock { $0?.cancel() } }

        /// The states the events gave task `id`, in order, without repeats.
        func states(of id: String) -> [String] {
            var states: [String] = []
            for event in events.withLock({ $0 }) {
                for task in API.object(event.data)["tasks"] as? [[String: Any]] ?? [] where task["id"] as? String == id
                {
                    if let state = task["state"] as? String, states.last != state { states.append(state) }
                }
            }
            return states
        }

        func wait(timeout: Duration = .seconds(60), until condition: () -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if condition() { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return condition()
        }
    }

    @Test func aTaskAddedThroughTheAPIRunsAndItsChangesArriveAsEvents() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        // Slow enough that the task is seen running (the events come from reads every 500 ms).
        let nginx = try await Nginx.static(root: fixture.directory, limitRatePerConnection: 8 << 10)
        let home = try TestRun.makeTemporaryDirectory("api-home")
        let server = try await ServeProcess.start(
            arguments: ["--port", "0", "--run-queue"], environment: ["STREAMKIT_HOME": home.path])
        #expect(server.output.contains("Queue: running its tasks"), "\(server.output)")
        let client = try HTTPClient()
        let api = API(base: "http://127.0.0.1:\(server.port)/", token: server.token, client: client)
        let events = EventLog()
        events.start(api)
        #expect(await events.wait(timeout: .seconds(10)) { events.events.withLock { $0.first?.name == "snapshot" } })

        // What the source offers, before adding it: its three variants, two audio renditions and
        // the subtitles, with the word that picks each.
        let source = nginx.url(fixture.recipe.entry).absoluteString
        let inspected = try await api.call(.post, "api/inspect", json: #"{"url":"\#(source)"}"#)
        #expect(inspected.status == 200, "\(inspected.body)")
        let choices = try JSONDecoder().decode(QueueSourceChoices.self, from: Data(inspected.body.utf8))
        #expect(choices.kind == "hls" && choices.variants.count == 3, "\(inspected.body)")
        #expect(choices.audio.count == 2 && choices.subtitles.count == 1, "\(inspected.body)")
        let lowest = try #require(choices.variants.last)

        // Added with the lowest variant and the second audio rendition, started at once.
        let addition = QueueAddition(
            url: source, title: "Master card", variant: lowest.choice, audio: choices.audio[1].choice, start: true)
        let added = try await api.call(
            .post, "api/tasks", json: String(decoding: try JSONEncoder().encode(addition), as: UTF8.self))
        #expect(added.status == 201, "\(added.body)")
        let id = try #require(API.object(added.body)["id"] as? String, "\(added.body)")
        // It runs and finishes; the page hears of it through the event stream, without asking.
        #expect(await events.wait { events.states(of: id).last == "success" }, "\(events.states(of: id))")
        #expect(events.states(of: id).contains("running"), "\(events.states(of: id))")
        let task = API.object(try await api.call(.get, "api/tasks/\(id)").body)
        #expect(task["state"] as? String == "success" && task["title"] as? String == "Master card", "\(task)")
        #expect((task["playPath"] as? String)?.hasPrefix("/library/\(id)/") == true, "\(task)")
        let playlist = try String(
            contentsOf: home.appendingPathComponent("library/\(id)/index.m3u8"), encoding: .utf8)
        #expect(playlist.contains("BANDWIDTH=\(lowest.bandwidth)"), "\(playlist)")

        // Renamed; a retry of a task that succeeded is a conflict, said in JSON.
        let renamed = try await api.call(.patch, "api/tasks/\(id)", json: #"{"title":"Renamed"}"#)
        #expect(API.object(renamed.body)["title"] as? String == "Renamed", "\(renamed.body)")
        // Kept in the queue's index, which lists read.
        let listed = API.object(try await api.call(.get, "api/tasks").body)["tasks"] as? [[String: Any]]
        #expect(listed?.first?["title"] as? String == "Renamed", "\(listed ?? [])")
        let retried = try await api.call(.post, "api/tasks/\(id)/retry")
        #expect(retried.status == 409 && retried.type == "application/json", "\(retried)")
        #expect((API.object(retried.body)["error"] as? String)?.contains("success") == true, "\(retried.body)")

        // Removed from the queue with its files kept: the package stays in the library; the event
        // stream says it left.
        let removed = try await api.call(.delete, "api/tasks/\(id)?keepFiles=true")
        #expect(API.object(removed.body)["removed"] as? [String] == [id], "\(removed.body)")
        #expect(
            await events.wait(timeout: .seconds(10)) {
                events.events.withLock {
                    $0.contains { (API.object($0.data)["left"] as? [String])?.contains(id) == true }
                }
            })
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("library/\(id)/index.m3u8").path))
        let library = API.object(try await api.call(.get, "api/library").body)
        #expect((library["items"] as? [[String: Any]])?.first?["id"] as? String == id, "\(library)")
        #expect(try await api.call(.get, "api/tasks/\(id)").status == 404)

        // The concurrency, set and read back.
        let queue = try await api.call(.patch, "api/queue", json: #"{"maximumConcurrentDownloads":3}"#)
        #expect(API.object(queue.body)["maximumConcurrentDownloads"] as? Int == 3, "\(queue.body)")
        #expect(API.object(queue.body)["isRunning"] as? Bool == true, "\(queue.body)")
        let tooMany = try await api.call(.patch, "api/queue", json: #"{"maximumConcurrentDownloads":99}"#)
        #expect(tooMany.status == 400 && (API.object(tooMany.body)["error"] as? String)?.contains("1 to 16") == true)
        events.stop()
        await client.shutdown()
        await nginx.stop()

        // Ctrl-C with an event stream open: the stream ends, serve stops at once and exits 0.
        let listener = try HTTPClient()
        let stream = EventLog()
        stream.start(API(base: api.base, token: api.token, client: listener))
        #expect(await stream.wait(timeout: .seconds(10)) { stream.events.withLock { !$0.isEmpty } })
        let signalled = ContinuousClock.now
        server.process.signal(SIGINT)
        #expect(try await server.process.wait(timeout: .seconds(20)) == 0)
        #expect(signalled.duration(to: .now) < .seconds(5), "\(signalled.duration(to: .now))")
        stream.stop()
        await listener.shutdown()
    }

    /// Start, stop and remove with files; every mistake answered as JSON with a message; no
    /// change without the token or from another site's page, and no reading from one.
    @Test func controlsErrorsAndRefusals() async throws {
        let origin = try await StaticOrigin.start(files: ["big.bin": 8 << 20], limitRate: 256 << 10)
        let home = try TestRun.makeTemporaryDirectory("api-home")
        let server = try await ServeProcess.start(
            arguments: ["--port", "0", "--run-queue"], environment: ["STREAMKIT_HOME": home.path])
        let client = try HTTPClient()
        let api = API(base: "http://127.0.0.1:\(server.port)/", token: server.token, client: client)

        // Added stopped (autostart is off), started, stopped while it runs, removed with its files.
        let added = try await api.call(.post, "api/tasks", json: #"{"url":"\#(origin.url("big.bin"))"}"#)
        #expect(added.status == 201, "\(added.body)")
        let id = try #require(API.object(added.body)["id"] as? String)
        #expect(
            API.object(added.body)["kind"] as? String == "file"
                && API.object(added.body)["state"] as? String == "stopped")
        #expect(API.object(try await api.call(.post, "api/tasks/\(id)/start").body)["tasks"] != nil)
        let deadline = ContinuousClock.now + .seconds(30)
        var done: Int64 = 0
        while ContinuousClock.now < deadline && done == 0 {
            try await Task.sleep(for: .milliseconds(100))
            done = (API.object(try await api.call(.get, "api/tasks/\(id)").body)["bytesDone"] as? Int64) ?? 0
        }
        #expect(done > 0)
        let stopped = try await api.call(.post, "api/tasks/\(id)/stop")
        let stoppedTask = (API.object(stopped.body)["tasks"] as? [[String: Any]])?.first
        #expect(stoppedTask?["state"] as? String == "stopped", "\(stopped.body)")
        let location = home.appendingPathComponent("downloads")
        #expect(try await api.call(.delete, "api/tasks/\(id)").status == 200)
        let left = (try? FileManager.default.subpathsOfDirectory(atPath: location.path)) ?? []
        #expect(!left.contains { $0.hasSuffix("big.bin") || $0.hasSuffix(".part") }, "\(left)")

        // Mistakes: each a JSON error with a message and the status that says what is wrong.
        for (method, path, json, status, words) in [
            (HTTPMethod.post, "api/tasks", #"{"title":"no url"}"#, 400, "url"),
            (.post, "api/tasks", #"{"url":"file:///etc/passwd"}"#, 400, "http or https"),
            (.post, "api/tasks", #"{"url":"http://127.0.0.1:1/a.mp4","variant":"sideways"}"#, 400, "variant"),
            (.post, "api/tasks", "not json", 400, "JSON"),
            (.post, "api/tasks/0123456789abcdef/start", nil, 404, "0123456789abcdef"),
            (.delete, "api/tasks/0123456789abcdef", nil, 404, "0123456789abcdef"),
            (.delete, "api/cache", nil, 400, "?url="),
            (.delete, "api/cache?url=http://127.0.0.1:1/none", nil, 404, "not cached"),
            (.put, "api/tasks", nil, 405, "Method Not Allowed"),
            (.get, "api/nothing-here", nil, 404, "Not Found"),
        ] as [(HTTPMethod, String, String?, Int, String)] {
            let answer = try await api.call(method, path, json: json)
            #expect(answer.status == status && answer.type == "application/json", "\(method) \(path): \(answer)")
            let error = API.object(answer.body)["error"] as? String
            #expect(error?.contains(words) == true, "\(method) \(path): \(answer.body)")
        }

        // The cache: pinned (an entry that fills as it is played), listed, unpinned, removed.
        let media = origin.url("big.bin")
        let pinned = try await api.call(.post, "api/cache/pin", json: #"{"url":"\#(media)"}"#)
        #expect(API.object(pinned.body)["pinned"] as? Bool == true, "\(pinned.body)")
        let listing = API.object(try await api.call(.get, "api/cache").body)
        let entries = listing["entries"] as? [[String: Any]] ?? []
        #expect(entries.count == 1 && entries.first?["url"] as? String == media, "\(listing)")
        #expect((listing["limit"] as? Int ?? 0) > 0, "\(listing)")
        let unpinned = try await api.call(.post, "api/cache/pin", json: #"{"url":"\#(media)","pinned":false}"#)
        #expect(API.object(unpinned.body)["pinned"] as? Bool == false, "\(unpinned.body)")
        // The cap, changed while serving and remembered for later commands; too small a cap is 400.
        let capped = try await api.call(.patch, "api/cache", json: #"{"limit":2097152}"#)
        #expect(API.object(capped.body)["limit"] as? Int == 2_097_152, "\(capped.body)")
        let remembered = try String(contentsOf: home.appendingPathComponent("cache/limit"), encoding: .utf8)
        #expect(remembered.trimmingCharacters(in: .whitespacesAndNewlines) == "2097152")
        let tiny = try await api.call(.patch, "api/cache", json: #"{"limit":0}"#)
        #expect(tiny.status == 400 && tiny.body.contains("1 MiB"), "\(tiny)")
        let gone = try await api.call(.delete, "api/cache?url=\(media)")
        #expect(API.object(gone.body)["removed"] as? Int == 1, "\(gone.body)")

        // No change without the token, nor from another site's page with it; no reading either.
        let anonymous = try await api.call(.post, "api/tasks", json: #"{"url":"\#(media)"}"#, token: false)
        #expect(anonymous.status == 401 && anonymous.type == "application/json", "\(anonymous)")
        let foreign = try await api.call(
            .post, "api/queue/start", headers: [("Origin", "http://attacker.example")])
        #expect(foreign.status == 403 && API.object(foreign.body)["error"] != nil, "\(foreign)")
        for path in ["api/tasks", "api/events", "api/cache", "api/queue"] {
            let read = try await api.call(.get, path, token: false, headers: [("Sec-Fetch-Site", "cross-site")])
            #expect(read.status == 403, "\(path): \(read)")
        }
        #expect(try await api.call(.get, "api/tasks").status == 200)
        await client.shutdown()
        server.process.signal(SIGINT)
        #expect(try await server.process.wait(timeout: .seconds(20)) == 0)
        await origin.nginx.stop()
    }
}
