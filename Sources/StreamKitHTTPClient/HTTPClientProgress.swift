import Foundation

/// How far a transfer or download has come: a `Sendable` value for progress streams.
public struct HTTPClientProgress: Hashable, Sendable {
    /// Bytes of the representation held so far (for a resumed download, counting the bytes that
    /// were already on disk).
    public var bytesReceived: Int64
    /// The representation's whole length, when the server announced it.
    public var expectedLength: Int64?
    /// Bytes received in this run (without what was already on disk).
    public var bytesTransferred: Int64
    /// The smoothed receive speed in bytes a second, once there is enough to measure.
    public var bytesPerSecond: Double?

    /// Creates a progress value.
    public init(bytesReceived: Int64, expectedLength: Int64?, bytesTransferred: Int64, bytesPerSecond: Double?) {
        self.bytesReceived = bytesReceived
        self.expectedLength = expectedLength
        self.bytesTransferred = bytesTransferred
        self.bytesPerSecond = bytesPerSecond
    }

    /// The fraction done, 0...1, when the length is known.
    public var fractionCompleted: Double? {
        guard let expectedLength, expectedLength > 0 else { return nil }
        return min(1, Double(bytesReceived) / Double(expectedLength))
    }

    /// The seconds left at the current speed, when both are known.
    public var estimatedSecondsRemaining: Double? {
        guard let expectedLength, let bytesPerSecond, bytesPerSecond > 0 else { return nil }
        return Double(max(0, expectedLength - bytesReceived)) / bytesPerSecond
    }
}

/// A receive speed smoothed with an exponentially weighted moving average whose weight follows
/// the time between samples (time constant `smoothing`), so irregular samples weigh fairly.
public struct TransferSpeedMeter: Sendable {
    /// The time constant of the average.
    public let smoothing: Duration
    /// Samples closer together than this are merged with the next one.
    public let minimumInterval: Duration
    private var lastSample: (bytes: Int64, at: ContinuousClock.Instant)?
    /// The smoothed speed in bytes a second, `nil` until two samples far enough apart were seen.
    public private(set) var bytesPerSecond: Double?

    /// Creates a meter.
    public init(smoothing: Duration = .seconds(2), minimumInterval: Duration = .milliseconds(200)) {
        self.smoothing = smoothing
        self.minimumInterval = minimumInterval
    }

    /// Records that `totalBytes` had arrived in all at `now`.
    public mutating func record(totalBytes: Int64, at now: ContinuousClock.Instant) {
        guard let last = lastSample else {
            lastSample = (totalBytes, now)
            return
        }
        let elapsed = last.at.duration(to: now)
        guard elapsed >= minimumInterval else { return }
        let seconds = elapsed.secondsValue
        let instant = Double(totalBytes - last.bytes) / seconds
        if let previous = bytesPerSecond {
            let weight = 1 - exp(-seconds / smoothing.secondsValue)
            bytesPerSecond = previous + weight * (instant - previous)
        } else {
            bytesPerSecond = instant
        }
        lastSample = (totalBytes, now)
    }
}
