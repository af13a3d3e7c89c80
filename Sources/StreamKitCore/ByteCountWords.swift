/// Byte counts for people in powers of 1024 with one decimal (`512 B`, `20.0 MB`), without
/// Foundation's locale-dependent formatting: what messages and pages show.
package enum ByteCountWords {
    /// `bytes` in the largest of `units` (bytes, then each a power of 1024 more) that keeps the
    /// number at least 1.
    package static func tenths(_ bytes: Int64, units: [String] = ["B", "KB", "MB", "GB", "TB"]) -> String {
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) \(units[0])" }
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
