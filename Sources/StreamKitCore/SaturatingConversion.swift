extension FixedWidthInteger {
    /// `value` rounded toward zero and clamped to the type's range; zero for NaN.
    ///
    /// `Int(someDouble)` traps when the value does not fit; durations and rates computed from a
    /// playlist (`#EXTINF:1e30,`, `BANDWIDTH=9e18`) must not take the process down.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            self = .max
        } else if value <= Double(Self.min) {
            self = .min
        } else {
            self.init(value)
        }
    }
}
