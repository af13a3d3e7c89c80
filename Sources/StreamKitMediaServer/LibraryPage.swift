import StreamKitCore

/// The HTML page at `/`: what the library holds, with a link to play each item.
enum LibraryPage {
    /// The most tasks the page lists; `/api/tasks` and `queue list` give every one.
    static let taskRows = 200

    /// What the page can change besides the library: the queue (with a ``QueueControl``) and
    /// the cache (with the caching proxy).
    struct Controls: Hashable, Sendable {
        var queue = false
        var cache = false
    }

    static func html(items: [MediaLibraryItem], tasks: QueueTaskPage? = nil, controls: Controls = Controls()) -> String
    {
        var rows = ""
        for item in items {
            // The raw figures ride on the row's delete button: the page's script sorts by them.
            let id = escape(item.id)
            rows += """
                <tr><td>\(escape(item.title))</td><td>\(escape(item.state))</td><td>\(formatSize(item.size))</td>\
                <td>\(item.duration.map(formatDuration) ?? "")</td>\
                <td><a href="\(escape(item.playPath))">\(escape(item.entry))</a>\
                \(item.dashPlayPath.map { " <a href=\"\(escape($0))\">\(escape(item.dashEntry ?? ""))</a>" } ?? "")</td>\
                <td><a href="/watch/\(escape(MediaLibrary.encodePathComponent(item.id)))">watch</a></td>\
                <td><button type="button" class="delete" data-id="\(id)" data-title="\(escape(item.title))" \
                data-size="\(item.size)" data-duration="\(item.duration ?? 0)" \
                aria-label="Delete \(escape(item.title))">Delete</button></td></tr>

                """
        }
        let size = items.reduce(Int64(0)) { $0 + $1.size }
        let duration = items.reduce(0.0) { $0 + ($1.duration ?? 0) }
        let count = items.count == 1 ? "1 item" : "\(formatCount(items.count)) items"
        let body =
            items.isEmpty
            ? "<p>The library is empty. Downloaded items appear here.</p>"
            : """
            <p id="totals">\(count) · \(formatSize(size)) · \(formatDuration(duration))</p>
            <p><label for="filter">Filter</label> <input id="filter" type="search" autocomplete="off"></p>
            <table id="items">
            <thead><tr><th><button type="button" data-sort="title">Title</button></th><th class="plain">State</th>\
            <th><button type="button" data-sort="size">Size</button></th>\
            <th><button type="button" data-sort="duration">Duration</button></th><th class="plain">Play</th>\
            <th class="plain">Watch</th><th class="plain">Remove</th></tr></thead>
            <tbody>
            \(rows)</tbody>
            </table>
            """
        return """
            <!doctype html>
            <html lang="en">
            \(PageAssets.head(title: "StreamKit library", scripts: tasks != nil || controls.cache ? ["library.js", "queue.js"] : ["library.js"]))
            <body>
            <h1>StreamKit library</h1>
            <section id="library" aria-label="Library">
            \(body)
            </section>
            <section id="queue" aria-label="Download queue">
            \(tasks.map { queueSection($0, controls: controls.queue) } ?? "")
            </section>
            \(controls.cache ? cacheSection : "")
            </body>
            </html>

            """
    }

    /// The download queue: how many tasks in each state, then each task's title, state, progress,
    /// size, speed and error, a play link once it is in the library: the unfinished tasks first,
    /// then the newest finished, at most ``taskRows`` of them.
    static func queueSection(_ page: QueueTaskPage, controls: Bool = false) -> String {
        // The table is there even when empty: the page's script adds the rows events bring.
        let form = controls ? queueForm : ""
        let total = page.total
        let states = page.states.sorted { $0.key < $1.key }.map { "\(formatCount($0.value)) \(escape($0.key))" }
        var summary =
            page.tasks.isEmpty
            ? "<p id=\"queue-summary\">The queue is empty.</p>"
            : "<p id=\"queue-summary\">\(formatCount(total)) \(total == 1 ? "task" : "tasks"): "
                + "\(states.joined(separator: ", ")).</p>"
        if page.tasks.count < total {
            summary += """

                <p>The \(formatCount(page.tasks.count)) shown are the unfinished tasks first, then the newest \
                finished. Every task: <a href="/api/tasks">/api/tasks</a> or <code>streamkit queue list</code>.</p>
                """
        }
        var rows = ""
        for task in page.tasks {
            let percent = Int((min(max(task.progress, 0), 1) * 100).rounded(.down))
            let size =
                formatSize(task.bytesDone) + (task.bytesExpected.map { " of " + formatSize($0) } ?? "")
            let speed =
                task.state == "running" && task.bytesPerSecond > 0 ? formatSize(Int64(task.bytesPerSecond)) + "/s" : ""
            let play = task.playPath.map { "<a href=\"\(escape($0))\">play</a>" } ?? ""
            // The page's script rewrites a row from the events of `/api/events`, found by its id.
            rows += """
                <tr data-id="\(escape(task.id))"><td>\(escape(task.title))</td><td>\(escape(task.state))</td>\
                <td><progress max="100" value="\(percent)">\(percent)%</progress> \(percent)%</td>\
                <td>\(size)</td><td>\(speed)</td><td class="error">\(escape(task.error ?? ""))</td><td>\(play)</td>\
                \(controls ? "<td>" + taskButtons(task) + "</td>" : "")</tr>

                """
        }
        return """
            <h2>Download queue</h2>
            \(form)\(summary)
            <table id="tasks">
            <thead><tr><th>Title</th><th>State</th><th>Progress</th><th>Size</th><th>Speed</th><th>Error</th>\
            <th>Play</th>\(controls ? "<th>Actions</th>" : "")</tr></thead>
            <tbody>
            \(rows)</tbody>
            </table>
            """
    }

    /// A task's buttons: the moves its state allows, and removal with or without its files. The
    /// page's script makes the same ones for rows it adds.
    static func taskButtons(_ task: QueueTaskSummary) -> String {
        let title = escape(task.title)
        var buttons: [String] = []
        for (action, label, states) in [
            ("start", "Start", ["stopped"]), ("stop", "Stop", ["ready", "running", "waiting"]),
            ("retry", "Retry", ["failed"]),
        ] where states.contains(task.state) {
            buttons.append(
                "<button type=\"button\" data-action=\"\(action)\" aria-label=\"\(label) \(title)\">\(label)</button>")
        }
        buttons.append("<button type=\"button\" data-action=\"remove\" aria-label=\"Remove \(title)\">Remove</button>")
        buttons.append(
            "<button type=\"button\" data-action=\"forget\" aria-label=\"Remove, keep files \(title)\">"
                + "Remove, keep files</button>")
        return buttons.joined(separator: " ")
    }

    /// Adding a URL (inspected first, for its variant, audio and subtitles), the number of tasks
    /// at once, start and stop all; what runs the queue is filled in by the script.
    static let queueForm = """
        <form id="add-form">
        <p><label for="add-url">URL</label> <input id="add-url" type="url" required \
        placeholder="https://example.com/master.m3u8"> <button type="button" id="inspect">Inspect</button></p>
        <p id="choices" hidden><label for="add-variant">Variant</label> <select id="add-variant"></select> \
        <label for="add-audio">Audio</label> <select id="add-audio"></select> \
        <label for="add-subtitles">Subtitles</label> <select id="add-subtitles"></select></p>
        <p><label for="add-title">Title</label> <input id="add-title" type="text"> \
        <label><input id="add-start" type="checkbox" checked> Start now</label> <button type="submit">Add</button></p>
        <p id="add-status" role="status" aria-live="polite"></p>
        </form>
        <p><label for="concurrency">Tasks at once</label> <input id="concurrency" type="number" min="1" max="16"> \
        <button type="button" id="set-concurrency">Set</button> <button type="button" id="start-all">Start all</button> \
        <button type="button" id="stop-all">Stop all</button></p>
        <p id="runner" role="status"></p>

        """

    /// The cache's section: the script lists its entries from `/api/cache`.
    static let cacheSection = """
        <section id="cache" aria-label="Cache">
        <h2>Cache</h2>
        <p id="cache-summary" role="status"></p>
        <form id="pin-form"><p><label for="pin-url">Keep a URL</label> <input id="pin-url" type="url" required> \
        <button type="submit">Pin</button> <button type="button" id="clear-cache">Clear the cache</button></p></form>
        <p><label for="cache-limit">Cap (MiB)</label> <input id="cache-limit" type="number" min="1"> \
        <button type="button" id="set-cache-limit">Set</button></p>
        <table id="cache-entries">
        <thead><tr><th>URL</th><th>Cached</th><th>Pinned</th><th>Actions</th></tr></thead>
        <tbody></tbody>
        </table>
        </section>
        """

    /// Text safe inside HTML elements and quoted attributes.
    static func escape(_ text: String) -> String { MarkupText.escaped(text) }

    /// `9,800`: a count with thousands separated.
    static func formatCount(_ count: Int) -> String {
        let digits = Array(String(count))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0, digits[index - 1] != "-" { text += "," }
            text.append(digit)
        }
        return text
    }

    /// `512 B`, `3.4 KiB`, `12.3 MiB`, `1.2 GiB`.
    static func formatSize(_ bytes: Int64) -> String {
        ByteCountWords.tenths(bytes, units: ["B", "KiB", "MiB", "GiB", "TiB"])
    }

    /// `0:42`, `12:03`, `1:02:03`.
    static func formatDuration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let hours = total / 3600
        let minutes = total % 3600 / 60
        let rest = total % 60
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }
}
