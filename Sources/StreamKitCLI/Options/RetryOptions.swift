import StreamKitHTTPClient

/// `--retries N`: how many failed attempts in a row a transfer survives.
struct RetryOptions: ParsableArguments {
    @Option(valueName: "count", help: "Failed attempts in a row to retry (each from the byte reached).") var retries = 4

    init() {}

    mutating func validate() throws {
        guard (0...100).contains(retries) else {
            throw ValidationError("--retries must be between 0 and 100, got \(retries)")
        }
    }

    /// Attempts in a row, the first included.
    var maximumAttempts: Int { retries + 1 }

    /// The HTTP client's policy for these retries.
    var policy: HTTPClientRetryPolicy { HTTPClientRetryPolicy(maximumAttempts: maximumAttempts) }
}
