extension PageAssets {
    /// The queue's and the cache's script on the library page (`/static/queue.js`): rows kept
    /// live from `/api/events` (Server-Sent Events), adding a URL after inspecting it, a task's
    /// moves, the number of tasks at once, and the cache's entries from `/api/cache`. Text goes
    /// in with `textContent` only: titles, URLs and errors come from elsewhere.
    static let queueScript = """
        "use strict";
        const sizeUnits = ["B", "KiB", "MiB", "GiB", "TiB"];
        function formatSize(bytes) {
            let value = Number(bytes) || 0;
            let unit = 0;
            while (value >= 1024 && unit < sizeUnits.length - 1) { value /= 1024; unit += 1; }
            return unit === 0 ? value + " B" : value.toFixed(1) + " " + sizeUnits[unit];
        }

        function cell(row, text, className) {
            const td = row.insertCell();
            td.textContent = text;
            if (className) { td.className = className; }
            return td;
        }

        function button(action, label, title) {
            const element = document.createElement("button");
            element.type = "button";
            element.dataset.action = action;
            element.textContent = label;
            element.setAttribute("aria-label", label + " " + title);
            return element;
        }

        // A task's row, as the server writes it: title, state, progress, size, speed, error, play
        // link, buttons.
        function fillRow(row, task) {
            row.replaceChildren();
            row.dataset.id = task.id;
            const percent = Math.floor(Math.min(Math.max(task.progress || 0, 0), 1) * 100);
            cell(row, task.title);
            cell(row, task.state);
            const progress = cell(row, "");
            const bar = document.createElement("progress");
            bar.max = 100;
            bar.value = percent;
            bar.textContent = percent + "%";
            progress.append(bar, " " + percent + "%");
            cell(row, formatSize(task.bytesDone) + (task.bytesExpected != null ? " of " + formatSize(task.bytesExpected) : ""));
            cell(row, task.state === "running" && task.bytesPerSecond > 0 ? formatSize(task.bytesPerSecond) + "/s" : "");
            cell(row, task.error || "", "error");
            const play = cell(row, "");
            if (task.playPath) {
                const link = document.createElement("a");
                link.href = task.playPath;
                link.textContent = "play";
                play.append(link);
            }
            if (document.getElementById("add-form")) {
                const actions = cell(row, "");
                const moves = [["start", "Start", ["stopped"]], ["stop", "Stop", ["ready", "running", "waiting"]],
                    ["retry", "Retry", ["failed"]]];
                for (const [action, label, states] of moves) {
                    if (states.includes(task.state)) { actions.append(button(action, label, task.title), " "); }
                }
                actions.append(button("remove", "Remove", task.title), " ", button("forget", "Remove, keep files", task.title));
            }
        }

        function showStates(states) {
            const summary = document.getElementById("queue-summary");
            if (!summary || !states) { return; }
            const names = Object.keys(states).sort();
            const total = names.reduce((sum, name) => sum + states[name], 0);
            summary.textContent = total === 0 ? "The queue is empty."
                : total.toLocaleString("en") + (total === 1 ? " task: " : " tasks: ")
                    + names.map((name) => states[name].toLocaleString("en") + " " + name).join(", ") + ".";
        }

        // Applies an event: new and changed tasks (new ones on top), tasks that left, the counts.
        // An action's answer (`existingOnly`) only updates rows still there: it may arrive after
        // the event that removed its task.
        function applyTasks(change, snapshot, existingOnly) {
            const tbody = document.querySelector("#tasks tbody");
            if (!tbody) { return; }
            let libraryChanged = false;
            if (snapshot) {
                // A snapshot is the whole list: rows of tasks it lacks went while the page was away.
                const ids = new Set((change.tasks || []).map((task) => task.id));
                for (const row of Array.from(tbody.rows)) {
                    if (!ids.has(row.dataset.id)) { row.remove(); }
                }
            }
            for (const task of change.tasks || []) {
                let row = tbody.querySelector(`tr[data-id="${CSS.escape(task.id)}"]`);
                if (!row && existingOnly) { continue; }
                if (!row) { row = tbody.insertRow(0); }
                if (!snapshot && row.cells[1]?.textContent !== task.state && task.state === "success") {
                    libraryChanged = true;
                }
                fillRow(row, task);
            }
            for (const id of change.left || []) {
                tbody.querySelector(`tr[data-id="${CSS.escape(id)}"]`)?.remove();
                libraryChanged = true;
            }
            showStates(change.states);
            if (libraryChanged && typeof refreshLibrary === "function") { refreshLibrary(); }
        }

        function listen() {
            if (!document.getElementById("tasks") || !window.EventSource) { return; }
            const events = new EventSource("/api/events");
            events.addEventListener("snapshot", (event) => applyTasks(JSON.parse(event.data), true));
            events.addEventListener("tasks", (event) => applyTasks(JSON.parse(event.data), false));
        }

        // Sends a change; returns the answer's JSON, or shows its error and returns null.
        async function send(method, path, body, status) {
            const options = { method, headers: {} };
            if (body !== undefined) {
                options.headers["Content-Type"] = "application/json";
                options.body = JSON.stringify(body);
            }
            try {
                const response = await fetch(path, options);
                const answer = await response.json().catch(() => ({}));
                if (response.ok) { return answer; }
                let message = answer.error || "HTTP " + response.status;
                if (response.status === 401) {
                    message = "Sign in first: open the sign-in URL streamkit serve printed, then try again.";
                }
                report(status, message, true);
            } catch (error) {
                report(status, "The server did not answer.", true);
            }
            return null;
        }

        // How many messages each status element was given: a reading that started before the
        // last one does not replace it.
        const reports = {};

        function report(id, text, failed) {
            const element = document.getElementById(id);
            if (!element) { return; }
            reports[id] = (reports[id] || 0) + 1;
            element.textContent = text;
            element.classList.toggle("failed", Boolean(failed));
        }

        function option(select, value, label) {
            const element = document.createElement("option");
            element.value = value;
            element.textContent = label;
            select.append(element);
        }

        async function inspect() {
            const url = document.getElementById("add-url").value.trim();
            if (!url) { return; }
            report("add-status", "Inspecting…");
            const choices = await send("POST", "/api/inspect", { url }, "add-status");
            if (!choices) { return; }
            const variant = document.getElementById("add-variant");
            const audio = document.getElementById("add-audio");
            const subtitles = document.getElementById("add-subtitles");
            for (const select of [variant, audio, subtitles]) { select.replaceChildren(); }
            option(variant, "best", "Best");
            for (const item of choices.variants || []) {
                const words = [item.resolution, Math.round(item.bandwidth / 1000) + " kbit/s", item.codecs];
                option(variant, item.choice, words.filter(Boolean).join(", "));
            }
            option(variant, "worst", "Worst");
            option(audio, "auto", "Default");
            option(audio, "all", "All");
            for (const item of choices.audio || []) {
                option(audio, item.choice, item.name + (item.language ? " (" + item.language + ")" : ""));
            }
            option(audio, "none", "None");
            option(subtitles, "all", "All");
            for (const item of choices.subtitles || []) {
                option(subtitles, item.choice, item.name + (item.language ? " (" + item.language + ")" : ""));
            }
            option(subtitles, "none", "None");
            const stream = choices.kind === "hls" || choices.kind === "dash";
            document.getElementById("choices").hidden = !stream;
            const title = document.getElementById("add-title");
            if (!title.value && choices.title) { title.value = choices.title; }
            const named = choices.kind === "hls" ? "An HLS stream" : "A DASH stream";
            report("add-status", stream ? named + ": choose what to keep." : "A file.");
        }

        async function add(event) {
            event.preventDefault();
            const body = { url: document.getElementById("add-url").value.trim(),
                start: document.getElementById("add-start").checked };
            const title = document.getElementById("add-title").value.trim();
            if (title) { body.title = title; }
            if (!document.getElementById("choices").hidden) {
                body.variant = document.getElementById("add-variant").value;
                body.audio = document.getElementById("add-audio").value;
                body.subtitles = document.getElementById("add-subtitles").value;
            }
            report("add-status", "Adding…");
            const task = await send("POST", "/api/tasks", body, "add-status");
            if (!task) { return; }
            report("add-status", "Added " + task.title + ".");
            applyTasks({ tasks: [task] }, false);
            document.getElementById("add-form").reset();
            document.getElementById("choices").hidden = true;
        }

        // The queue's state, unless an answer to a button came while it was read: a refusal
        // ("Sign in first") stays in view.
        async function showRunner() {
            const before = reports.runner || 0;
            const status = await send("GET", "/api/queue", undefined, "runner");
            if (!status) { return; }
            document.getElementById("concurrency").value = status.maximumConcurrentDownloads;
            if ((reports.runner || 0) !== before) { return; }
            report("runner", status.isRunning ? "The queue is running: started tasks run at once."
                : "Nothing runs the queue: started tasks wait for `streamkit queue run` (or serve --run-queue).");
        }

        // The cache: its entries, most recently used first, with pin and remove.
        async function showCache() {
            const tbody = document.querySelector("#cache-entries tbody");
            if (!tbody || document.hidden) { return; }
            const listing = await send("GET", "/api/cache", undefined, "cache-summary");
            if (!listing) { return; }
            tbody.replaceChildren();
            for (const entry of listing.entries) {
                const row = tbody.insertRow();
                row.dataset.url = entry.url;
                cell(row, entry.url);
                cell(row, formatSize(entry.cachedBytes) + (entry.length ? " of " + formatSize(entry.length) : ""));
                cell(row, entry.pinned ? "pinned" : "");
                const actions = cell(row, "");
                actions.append(entry.pinned ? button("unpin", "Unpin", entry.url) : button("pin", "Pin", entry.url), " ",
                    button("uncache", "Remove", entry.url));
            }
            const cap = document.getElementById("cache-limit");
            if (cap && document.activeElement !== cap) { cap.value = Math.round(listing.limit / 1048576); }
            let text = listing.entryCount.toLocaleString("en") + (listing.entryCount === 1 ? " entry, " : " entries, ")
                + formatSize(listing.cachedBytes) + " of a " + formatSize(listing.limit) + " cap ("
                + formatSize(listing.pinnedBytes) + " pinned, outside the cap).";
            if (listing.listed < listing.entryCount) { text += " The " + listing.listed + " most recently used are shown."; }
            report("cache-summary", text);
        }

        document.addEventListener("click", async (event) => {
            const target = event.target.closest("button");
            if (!target) { return; }
            if (target.id === "inspect") { return inspect(); }
            if (target.id === "start-all" || target.id === "stop-all") {
                return send("POST", "/api/queue/" + target.id.slice(0, -4), undefined, "runner");
            }
            if (target.id === "set-concurrency") {
                const count = Number(document.getElementById("concurrency").value);
                if (await send("PATCH", "/api/queue", { maximumConcurrentDownloads: count }, "runner")) { showRunner(); }
                return;
            }
            // After a cache change the list is read again, unless the change failed: its message
            // stays in view.
            if (target.id === "set-cache-limit") {
                const mebibytes = Number(document.getElementById("cache-limit").value);
                if (await send("PATCH", "/api/cache", { limit: Math.round(mebibytes * 1048576) }, "cache-summary")) {
                    showCache();
                }
                return;
            }
            if (target.id === "clear-cache") {
                if (window.confirm("Remove every entry of the cache, pinned ones too?")
                    && await send("DELETE", "/api/cache?all=true", undefined, "cache-summary")) {
                    showCache();
                }
                return;
            }
            const action = target.dataset.action;
            const entry = target.closest("tr[data-url]");
            if (entry && ["pin", "unpin", "uncache"].includes(action)) {
                const url = entry.dataset.url;
                const done = action === "uncache"
                    ? await send("DELETE", "/api/cache?url=" + encodeURIComponent(url), undefined, "cache-summary")
                    : await send("POST", "/api/cache/pin", { url, pinned: action === "pin" }, "cache-summary");
                if (done) { showCache(); }
                return;
            }
            const row = target.closest("tr[data-id]");
            if (!row || !action) { return; }
            const id = encodeURIComponent(row.dataset.id);
            if (action === "remove" || action === "forget") {
                const title = row.cells[0].textContent;
                const question = action === "remove" ? `Remove "${title}" and delete its files?`
                    : `Remove "${title}" from the queue and keep its files?`;
                if (!window.confirm(question)) { return; }
                const query = action === "forget" ? "?keepFiles=true" : "";
                const answer = await send("DELETE", "/api/tasks/" + id + query, undefined, "add-status");
                // The row goes now: a task added and removed between two reads of the queue is
                // never in an event.
                if (answer) { applyTasks({ left: answer.removed }, false); }
                return;
            }
            const answer = await send("POST", "/api/tasks/" + id + "/" + action, undefined, "add-status");
            if (answer) { applyTasks({ tasks: answer.tasks }, false, true); }
        });

        document.addEventListener("submit", (event) => {
            if (event.target.id === "add-form") { return add(event); }
            if (event.target.id === "pin-form") {
                event.preventDefault();
                const input = document.getElementById("pin-url");
                send("POST", "/api/cache/pin", { url: input.value.trim() }, "cache-summary").then((entry) => {
                    if (entry) {
                        input.value = "";
                        showCache();
                    }
                });
            }
        });

        listen();
        if (document.getElementById("add-form")) { showRunner(); }
        showCache();
        setInterval(showCache, 10000);

        """
}
