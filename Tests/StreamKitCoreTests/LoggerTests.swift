import StreamKitCore
import Testing

@Suite struct LoggerTests {
    @Test func levelsFilterAndMetadataMerges() {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test", level: .info, handler: handler)
        logger.metadata["task"] = "42"
        var formatted = 0
        logger.debug(
            {
                formatted += 1; return "hidden"
            }())
        logger.info("shown", metadata: ["url": "http://x"])
        logger.with("task", "43").error("failed")
        #expect(formatted == 0, "a disabled level does not format its message")
        let records = handler.records
        #expect(records.map(\.message) == ["shown", "failed"])
        #expect(records[0].metadata == ["task": "42", "url": "http://x"])
        #expect(records[1].metadata == ["task": "43"])
        #expect(records[1].level == .error && records[1].label == "test")
        #expect(records[0].file.hasSuffix("LoggerTests.swift"))
    }

    @Test func disabledLoggerDropsEverything() {
        Logger.disabled.critical("nothing")
        #expect(Logger.disabled.logLevel == .critical)
        #expect(Logger.Level.trace < .critical)
    }
}

extension Logger {
    fileprivate func critical(_ message: String) { log(level: .critical, message) }
}
