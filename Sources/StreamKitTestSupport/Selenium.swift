import Foundation

/// Headless Chromium driven through WebDriver (Debian's `chromedriver` and Python's Selenium):
/// unlike `chromium --dump-dom`, it survives pages that turn into downloads, and it waits a set
/// time on each page for its scripts, frames and media to do what they would.
public enum Selenium {
    /// What the browser showed for one URL.
    public struct Visit: Decodable, Sendable {
        /// The URL visited.
        public let url: String
        /// Where the browser ended (the URL itself, or what it was redirected to).
        public let location: String
        /// The document's title.
        public let title: String
        /// The document's markup, as its scripts left it (the first 20,000 characters).
        public let html: String
        /// What the probe script returned, as JSON; `nil` without one.
        public let probe: String?
    }

    /// Visits `urls` in turn in one browser, staying `settle` on each, and returns what each
    /// showed. Downloads land in `directory`/downloads, the driver's log in `directory`.
    ///
    /// - Parameters:
    ///   - prepare: JavaScript run on each page once it has loaded (a user's first action).
    ///   - probe: JavaScript run after `settle` whose return value is kept as JSON (``Visit/probe``).
    ///   - width: The window's width in CSS pixels (its height 800); Chromium's default when `nil`.
    ///   - screenshots: Whether each page is saved as `directory`/page-N.png (N from 1) after `settle`.
    ///   - doneWhen: A JavaScript expression; when given, `settle` is the longest wait, and the
    ///     wait ends as soon as the expression is true (checked every 100 ms).
    /// - Throws: ``TestSupportError`` when the driver or Python is missing, or the browser fails.
    public static func visit(
        _ urls: [String], settle: Duration = .seconds(3), directory: URL, prepare: String = "",
        probe: String = "", width: Int? = nil, screenshots: Bool = false, doneWhen: String = ""
    ) async throws -> [Visit] {
        _ = try Tool.selenium.requirePath()
        let script = directory.appendingPathComponent("visit.py")
        try source.write(to: script, atomically: true, encoding: .utf8)
        let downloads = directory.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let seconds = Double(settle.components.seconds) + Double(settle.components.attoseconds) / 1e18
        // One browser at a time (``BrowserGate``); Debian's Python, which has the bindings (not
        // whichever python3 comes first on PATH).
        let (status, output) = try await BrowserGate.run {
            () async throws -> (Int32, (standardOutput: String, standardError: String)) in
            let process = try ChildProcess(
                executable: "/usr/bin/python3",
                arguments: [
                    script.path, downloads.path, "\(seconds)",
                    directory.appendingPathComponent("chromedriver.log").path,
                    prepare, probe, width.map(String.init) ?? "", screenshots ? directory.path : "", doneWhen,
                ] + urls, workingDirectory: directory, logName: "selenium")
            do {
                let status = try await process.wait(timeout: .seconds(60 + (40 + Int(seconds)) * urls.count))
                return (status, (process.standardOutput, process.standardError))
            } catch {
                await process.stop(timeout: .seconds(1))
                throw error
            }
        }
        guard status == 0 else {
            throw TestSupportError("the browser exited with \(status):\n\(output.standardError.suffix(2_000))")
        }
        guard let line = output.standardOutput.split(separator: "\n").last else {
            throw TestSupportError("the browser printed nothing:\n\(output.standardError.suffix(2_000))")
        }
        return try JSONDecoder().decode([Visit].self, from: Data(line.utf8))
    }

    private static let source = """
        import json, sys, time
        from selenium import webdriver
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.chrome.service import Service

        downloads, settle, log, prepare, probe, width, shots, done, *urls = sys.argv[1:]
        options = webdriver.ChromeOptions()
        for argument in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--autoplay-policy=no-user-gesture-required"]:
            options.add_argument(argument)
        options.add_experimental_option(
            "prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", log_path=log), options=options)
        driver.set_page_load_timeout(30)
        if width:
            # The window's outer size is set; the page's width is made exact from what it reports.
            driver.set_window_size(int(width), 800)
            inner = driver.execute_script("return window.innerWidth")
            driver.set_window_size(2 * int(width) - inner, 800)
        visits = []
        try:
            for url in urls:
                try:
                    driver.get(url)
                except TimeoutException:
                    pass
                if prepare:
                    driver.execute_script(prepare)
                if done:
                    deadline = time.monotonic() + float(settle)
                    while time.monotonic() < deadline and not driver.execute_script("return Boolean(" + done + ")"):
                        time.sleep(0.1)
                else:
                    time.sleep(float(settle))
                result = json.dumps(driver.execute_script(probe)) if probe else None
                if shots:
                    driver.save_screenshot(f"{shots}/page-{len(visits) + 1}.png")
                visits.append({"url": url, "location": driver.current_url, "title": driver.title,
                               "html": driver.page_source[:20000], "probe": result})
        finally:
            driver.quit()
        print(json.dumps(visits))
        """
}
