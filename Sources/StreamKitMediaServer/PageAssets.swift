/// The files the server's own pages load (`/static/…`): one style for every page and a script
/// for each, compiled into the binary so that the pages need nothing inline and nothing from
/// elsewhere (`Content-Security-Policy: default-src 'self'`). Plain JavaScript: `fetch`,
/// `DOMParser` and DOM events, no framework.
enum PageAssets {
    /// The `<head>` of every page of the server: its title (already escaped), the style, and its
    /// scripts (paths under `/static/`), deferred.
    static func head(title: String, scripts: [String]) -> String {
        let tags = scripts.map { "<script src=\"/static/\($0)\" defer></script>\n" }.joined()
        return """
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title)</title>
            <link rel="stylesheet" href="/static/app.css">
            \(tags)</head>
            """
    }

    /// The pages' style: readable from 360 to 1440 pixels wide, no horizontal scroll.
    static let stylesheet = """
        body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 1em; max-width: 72em; }
        nav { margin-bottom: 1em; }
        h1 { font-size: 1.5em; overflow-wrap: anywhere; }
        video { display: block; width: 100%; max-height: 80vh; background: #000; }
        a, code { overflow-wrap: anywhere; }
        ul { padding-left: 1.2em; }
        table { border-collapse: collapse; display: block; overflow-x: auto; }
        th, td { padding: 0.3em 1em; text-align: left; border-bottom: 1px solid #ddd; white-space: nowrap; }
        td.error, #tasks td:last-child { white-space: normal; }
        th button { font: inherit; font-weight: bold; border: 0; background: none; padding: 0; cursor: pointer; }
        input[type=search], input[type=url], input[type=text], select { font: inherit; max-width: 100%; }
        input[type=url] { width: 30em; }
        td button { margin: 0.1em 0; }
        #add-status.failed, #cache-summary.failed { color: #a00; }
        /* A phone: each row a block of lines, the sort buttons in a row above. */
        @media (max-width: 40em) {
            table, tbody, tr, td { display: block; }
            thead tr { display: flex; flex-wrap: wrap; gap: 0.3em 1em; }
            thead th { display: block; padding: 0.3em 0; border: 0; }
            thead th.plain, #queue thead, #cache thead { display: none; }
            tr { border-bottom: 1px solid #ddd; padding: 0.4em 0; }
            td { border: 0; padding: 0.1em 0; white-space: normal; overflow-wrap: anywhere; }
        }

        """

    /// The player page's script: says so when the browser cannot play HLS or the package fails.
    static let watchScript = """
        "use strict";
        // The package plays in the browser's own HLS support; where there is none, the page
        // points to the playlist and `streamkit play` instead.
        const video = document.getElementById("player");
        const support = document.getElementById("support");
        if (video && support) {
            if (!video.canPlayType("application/vnd.apple.mpegurl")) {
                support.hidden = false;
            }
            video.addEventListener("error", () => {
                const failed = document.getElementById("failed");
                if (failed) { failed.hidden = false; }
            });
        }

        """

    /// The library page's script: filter and sort the items, remove one after asking, and
    /// refresh the library's section without losing the filter.
    static let libraryScript = """
        "use strict";
        let sortKey = null;
        let ascending = true;

        // Shows the rows whose title holds the filter's words, in the chosen order.
        function arrange() {
            const tbody = document.querySelector("#items tbody");
            if (!tbody) { return; }
            const words = (document.getElementById("filter")?.value || "").toLowerCase().split(/\\s+/);
            const rows = Array.from(tbody.rows);
            for (const row of rows) {
                const title = row.querySelector("button.delete")?.dataset.title.toLowerCase() || "";
                row.hidden = !words.every((word) => title.includes(word));
            }
            if (sortKey) {
                const value = (row) => {
                    const data = row.querySelector("button.delete")?.dataset || {};
                    return sortKey === "title" ? (data.title || "").toLowerCase() : Number(data[sortKey] || 0);
                };
                rows.sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0) * (ascending ? 1 : -1));
                for (const row of rows) { tbody.appendChild(row); }
            }
        }

        // Replaces the library section with the server's, keeping the filter's text. The queue's
        // section lives on the events of /api/events (queue.js), which call this when a task
        // finishes or leaves.
        async function refreshLibrary() {
            if (document.hidden) { return; }
            try {
                const response = await fetch("/", { cache: "no-store" });
                if (!response.ok) { return; }
                const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
                const filter = document.getElementById("filter")?.value || "";
                const now = document.getElementById("library");
                const next = fresh.getElementById("library");
                if (now && next) { now.replaceWith(document.adoptNode(next)); }
                const input = document.getElementById("filter");
                if (input) { input.value = filter; }
                arrange();
            } catch (error) {
                // The server is away: the page stays as it is until it answers again.
            }
        }

        document.addEventListener("input", (event) => {
            if (event.target.id === "filter") { arrange(); }
        });

        document.addEventListener("click", async (event) => {
            const sort = event.target.closest("button[data-sort]");
            if (sort) {
                ascending = sortKey === sort.dataset.sort ? !ascending : true;
                sortKey = sort.dataset.sort;
                arrange();
                return;
            }
            const remove = event.target.closest("button.delete");
            if (!remove || !window.confirm(`Delete "${remove.dataset.title}" and its files?`)) { return; }
            const response = await fetch("/api/library/" + encodeURIComponent(remove.dataset.id), { method: "DELETE" });
            if (response.ok) {
                remove.closest("tr").remove();
                refreshLibrary();
            } else if (response.status === 401 || response.status === 403) {
                window.alert("Sign in first: open the sign-in URL streamkit serve printed, then try again.");
            } else {
                window.alert("The item could not be deleted (HTTP " + response.status + ").");
            }
        });

        // Packages written outside the queue (`streamkit download`) appear within a minute.
        setInterval(refreshLibrary, 60000);

        """
}
