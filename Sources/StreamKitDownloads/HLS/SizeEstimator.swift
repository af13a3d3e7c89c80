import StreamKitCore

/// Estimates a package's size before its files have arrived: exact for files done and for byte
/// ranges, otherwise bytes a second of media (measured on the rendition's files done so far, or
/// from the variant's BANDWIDTH before any) times the seconds left. Pure.
struct SizeEstimator: Sendable, Hashable {
    /// One rendition's figures.
    struct Rendition: Sendable, Hashable {
        /// Bytes a second of media assumed before any file is done (`nil`: unknown).
        var priorBytesPerSecond: Double?
        /// Seconds of media planned.
        var totalDuration = 0.0
        /// Segment files done: their media seconds and bytes.
        var doneDuration = 0.0
        var doneBytes: Int64 = 0
        /// Pending files whose length is known in advance (byte ranges): seconds and bytes.
        var exactDuration = 0.0
        var exactBytes: Int64 = 0
        /// Maps and keys done.
        var otherBytes: Int64 = 0
    }

    var renditions: [Rendition]

    /// The estimated total in bytes; `nil` until the main rendition (the first) has a rate.
    func estimate() -> Int64? {
        var total: Double = 0
        for (index, rendition) in renditions.enumerated() {
            var part = Double(rendition.doneBytes + rendition.exactBytes + rendition.otherBytes)
            let remaining = max(0, rendition.totalDuration - rendition.doneDuration - rendition.exactDuration)
            let rate: Double? =
                rendition.doneDuration > 0
                ? Double(rendition.doneBytes) / rendition.doneDuration : rendition.priorBytesPerSecond
            if let rate {
                part += rate * remaining
            } else if index == 0 && remaining > 0 {
                return nil
            }
            total += part
        }
        return Int64(saturating: total.rounded())
    }
}
