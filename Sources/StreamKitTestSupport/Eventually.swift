/// Waits until `condition` holds, checking it every `interval`, for at most `timeout`: what a
/// test does instead of sleeping a fixed time before it asserts, so that a busy machine makes it
/// slower rather than wrong.
///
/// - Returns: Whether the condition held (checked once more at the deadline).
public func eventually(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
