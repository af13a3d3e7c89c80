import Foundation
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaServer
import StreamKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The queue and the cache in the page of `streamkit serve --run-queue`, driven in headless
/// Chromium: a URL added from the page (inspected first) runs and finishes with its row kept
/// live by `/api/events`, never reloading; its package then plays on its player page with the
/// origin stopped; a file task is started, stopped and removed from its row; a cache entry is
/// pinned and removed. Screenshots of the page at 360 and 1440 px go to the folder printed.
@Suite(.requires(.chromium, .selenium, .nginx, .ffmpeg)) struct QueuePageBrowserTests {
    struct Outcome: Decodable {
        var variants: Int
        var states: [String]
        var reloaded: Bool
        var libraryTitles: [String]
        var fileStates: [String]
        var fileRowGone: Bool
        var pinnedShown: Bool
        var cacheRowGone: Bool
        var capShown: Bool
        var errors: [String]
        var sideways: Bool
    }

    @Test func addRunWatchStopRemoveAndPinFromThePage() async throws {
        let fixture = try await Fixtures.shared.fixture(FixtureRecipe(.hlsMaster))
        // Slow enough that the task is seen running and a file task can be stopped mid-way.
        let nginx = try await Nginx.static(root: fixture.directory, limitRatePerConnection: 8 << 10)
        let files = try await StaticOrigin.start(files: ["big.bin": 8 << 20], limitRate: 128 << 10)
        let home = try TestRun.makeTemporaryDirectory("queue-page-home")
        let server = try await ServeProcess.start(
            arguments: ["--port", "0", "--run-queue"], environment: ["STREAMKIT_HOME": home.path])
        let base = "http://127.0.0.1:\(server.port)/"
        let stream = nginx.url(fixture.recipe.entry).absoluteString
        let file = files.url("big.bin")
        let cached = nginx.url("cover.jpg").absoluteString
        let directory = try TestRun.makeTemporaryDirectory("queue-page")
        // The page's own controls, as a user works them, one after another; what the rows said at
        // each moment is collected for the probe.
        let prepare = """
            window.confirm = () => true;
            window.marker = "not reloaded";
            const out = {variants: 0, states: [], libraryTitles: [], fileStates: [], fileRowGone: false,
                         pinnedShown: false, cacheRowGone: false, capShown: false, errors: [], done: false};
            window.outcome = out;
            const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
            async function until(check, ms) {
                const end = Date.now() + ms;
                while (Date.now() < end) { if (check()) { return true; } await wait(100); }
                return check();
            }
            const rowOf = (title) => Array.from(document.querySelectorAll('#tasks tbody tr'))
                .find((row) => row.cells[0].textContent === title);
            function note(list, title) {
                const state = rowOf(title)?.cells[1].textContent;
                if (state && list[list.length - 1] !== state) { list.push(state); }
            }
            (async () => {
                try {
                    document.getElementById('add-url').value = '\(stream)';
                    document.getElementById('inspect').click();
                    await until(() => !document.getElementById('choices').hidden, 20000);
                    out.variants = document.getElementById('add-variant').options.length;
                    document.getElementById('add-variant').selectedIndex = out.variants - 2;
                    document.getElementById('add-title').value = 'From the page';
                    document.querySelector('#add-form button[type=submit]').click();
                    await until(() => { note(out.states, 'From the page'); return out.states.includes('success'); }, 60000);
                    await until(() => Array.from(document.querySelectorAll('#items tbody tr'))
                        .some((row) => row.cells[0].textContent === 'From the page'), 70000);
                    out.libraryTitles = Array.from(document.querySelectorAll('#items tbody tr')).map((row) => row.cells[0].textContent);

                    document.getElementById('add-url').value = '\(file)';
                    document.getElementById('add-title').value = 'A file';
                    document.getElementById('add-start').checked = false;
                    document.querySelector('#add-form button[type=submit]').click();
                    await until(() => { note(out.fileStates, 'A file'); return rowOf('A file')?.querySelector('[data-action=start]'); }, 10000);
                    rowOf('A file').querySelector('[data-action=start]').click();
                    await until(() => { note(out.fileStates, 'A file'); return rowOf('A file')?.querySelector('[data-action=stop]') && out.fileStates.includes('running'); }, 20000);
                    rowOf('A file').querySelector('[data-action=stop]').click();
                    await until(() => { note(out.fileStates, 'A file'); return out.fileStates[out.fileStates.length - 1] === 'stopped'; }, 20000);
                    rowOf('A file').querySelector('[data-action=remove]').click();
                    out.fileRowGone = await until(() => !rowOf('A file'), 10000);

                    document.getElementById('pin-url').value = '\(cached)';
                    document.querySelector('#pin-form button[type=submit]').click();
                    const entry = () => document.querySelector('#cache-entries tbody tr');
                    out.pinnedShown = await until(() => entry()?.cells[2].textContent === 'pinned', 10000);
                    entry()?.querySelector('[data-action=uncache]')?.click();
                    out.cacheRowGone = await until(() => !entry(), 10000);
                    document.getElementById('cache-limit').value = '64';
                    document.getElementById('set-cache-limit').click();
                    out.capShown = await until(() => document.getElementById('cache-summary').textContent
                        .includes('of a 64.0 MiB cap'), 10000);
                } catch (error) {
                    out.errors.push(String(error));
                }
                out.done = true;
            })();
            """
        let probe = """
            const out = window.outcome || {};
            const page = document.documentElement;
            return Object.assign({}, out, {reloaded: window.marker !== "not reloaded",
                                           sideways: page.scrollWidth > page.clientWidth});
            """
        let visits = try await Selenium.visit(
            [base + "?token=" + server.token], settle: .seconds(150), directory: directory, prepare: prepare,
            probe: probe, width: 1440, doneWhen: "window.outcome && window.outcome.done")
        let outcome = try JSONDecoder().decode(Outcome.self, from: Data(try #require(visits.first?.probe).utf8))
        #expect(outcome.errors.isEmpty, "\(outcome.errors)")
        // Best, three variants, worst.
        #expect(outcome.variants == 5)
        #expect(outcome.states.contains("running") && outcome.states.last == "success", "\(outcome.states)")
        #expect(!outcome.reloaded)
        #expect(outcome.libraryTitles == ["From the page"], "\(outcome.libraryTitles)")
        #expect(outcome.fileStates.contains("running") && outcome.fileStates.last == "stopped", "\(outcome.fileStates)")
        #expect(outcome.fileRowGone && outcome.pinnedShown && outcome.cacheRowGone && outcome.capShown, "\(outcome)")
        #expect(!outcome.sideways)
        let leftovers = (try? FileManager.default.subpathsOfDirectory(atPath: home.path + "/downloads")) ?? []
        #expect(!leftovers.contains { $0.contains("big.bin") }, "\(leftovers)")

        // The package plays on its player page with the origin gone.
        await nginx.stop()
        await files.nginx.stop()
        let library = try FileManager.default.contentsOfDirectory(atPath: home.path + "/library")
        let id = try #require(library.first, "\(library)")
        let played = try await Selenium.visit(
            [base + "watch/" + id], settle: .seconds(7), directory: directory,
            prepare: "const v = document.getElementById('player'); v.muted = true; v.play();",
            probe: """
                const v = document.getElementById('player');
                return {time: v.currentTime, error: v.error ? v.error.code : 0};
                """)
        struct Playback: Decodable {
            var time: Double
            var error: Int
        }
        let playback = try JSONDecoder().decode(Playback.self, from: Data(try #require(played.first?.probe).utf8))
        #expect(playback.time > 3 && playback.error == 0, "\(playback)")

        // Refusals in the browser. Without the sign-in cookie (a browser of its own), the page's
        // "Start all" is refused and the page says to sign in. Signed in, a page of another origin
        // (served by the file origin) tries to add a task, stop the queue and delete the package
        // with the cookie the browser would send it: nothing changes.
        let anonymous = try await Selenium.visit(
            [base], settle: .seconds(10), directory: directory,
            prepare: "document.getElementById('start-all').click();",
            probe: "return document.getElementById('runner').textContent;",
            doneWhen: "document.getElementById('runner').textContent.includes('Sign in')")
        #expect(anonymous.first?.probe?.contains("Sign in first") == true, "\(anonymous.first?.probe ?? "")")
        // A stopped task for the attacker to start (a file origin that is gone: it is never fetched).
        let held = try await call(
            base, "api/tasks", token: server.token, json: #"{"url":"\#(file)","title":"Held"}"#)
        let heldID = try #require(held.first { $0.title == "Held" }?.id)
        try """
        <html><body>
        <form id="f" method="post" action="\(base)api/queue/start"></form>
        <script>
        fetch('\(base)api/tasks/\(heldID)/start', {method: 'POST', mode: 'no-cors', credentials: 'include'});
        fetch('\(base)api/library/\(id)', {method: 'DELETE', credentials: 'include'});
        setTimeout(() => document.getElementById('f').submit(), 500);
        </script></body></html>
        """.write(to: files.root.appendingPathComponent("attack.html"), atomically: true, encoding: .utf8)
        let attacker = try await Nginx.static(root: files.root)
        _ = try await Selenium.visit(
            [base + "?token=" + server.token, attacker.url("attack.html").absoluteString], settle: .seconds(3),
            directory: directory)
        await attacker.stop()
        let queue = try await call(base, "api/tasks")
        #expect(queue.map(\.title) == ["From the page", "Held"], "\(queue)")
        #expect(queue.last?.state == "stopped", "\(queue)")
        #expect(FileManager.default.fileExists(atPath: home.path + "/library/" + id + "/index.m3u8"))

        // The page with its controls at a phone's width and a desktop's: no sideways scroll.
        for width in [360, 1440] {
            let shots = try TestRun.makeTemporaryDirectory("queue-page-\(width)")
            let layout = try await Selenium.visit(
                [base], settle: .seconds(2), directory: shots,
                probe: "const p = document.documentElement; return p.scrollWidth > p.clientWidth;", width: width,
                screenshots: true)
            print("queue page screenshots at \(width) px: \(shots.path)")
            #expect(layout.first?.probe == "false", "the page scrolls sideways at \(width) px")
        }
        server.process.signal(SIGINT)
        #expect(try await server.process.wait(timeout: .seconds(20)) == 0)
    }

    /// `GET` `path` (the queue's tasks), or `POST` `json` to it with the token (the task added).
    private func call(
        _ base: String, _ path: String, token: String? = nil, json: String? = nil
    ) async throws -> [QueueTaskSummary] {
        let client = try HTTPClient()
        var request = HTTPClientRequest(url: base + path, method: json == nil ? .get : .post)
        if let token { request.headers.add("Authorization", "Bearer \(token)") }
        if let json {
            request.headers.add("Content-Type", "application/json")
            request.body = Array(json.utf8)
        }
        let answer = try? await client.data(for: request)
        await client.shutdown()
        let body = Data(try #require(answer?.1))
        if json != nil { return [try JSONDecoder().decode(QueueTaskSummary.self, from: body)] }
        struct Page: Decodable { let tasks: [QueueTaskSummary] }
        return try JSONDecoder().decode(Page.self, from: body).tasks
    }
}
